// The part of UnityEngine the brainstem package uses, for compiling and running it under Mono
// here: a frame loop (Update on every component, then the completed web requests delivered
// on the main thread, as Unity does), transforms and vectors, Physics.Linecast with nothing
// in the way, and UnityWebRequest doing real HTTP through HttpClient off the main thread.
// Signatures follow Unity's scripting reference; behaviour is only what the tests need.
using System;
using System.Collections.Generic;
using System.Net.Http;
using System.Reflection;
using System.Threading.Tasks;

namespace UnityEngine
{
    public class TooltipAttribute : Attribute { public TooltipAttribute(string s) { } }
    public class RangeAttribute : Attribute { public RangeAttribute(float a, float b) { } }

    public struct Vector3
    {
        public float x, y, z;
        public Vector3(float x, float y, float z) { this.x = x; this.y = y; this.z = z; }
        public static Vector3 up { get { return new Vector3(0, 1, 0); } }
        public static Vector3 operator +(Vector3 a, Vector3 b) { return new Vector3(a.x + b.x, a.y + b.y, a.z + b.z); }
        public static Vector3 operator -(Vector3 a, Vector3 b) { return new Vector3(a.x - b.x, a.y - b.y, a.z - b.z); }
        public static Vector3 operator *(Vector3 a, float k) { return new Vector3(a.x * k, a.y * k, a.z * k); }
        public float sqrMagnitude { get { return x * x + y * y + z * z; } }
        public float magnitude { get { return (float)Math.Sqrt(sqrMagnitude); } }
        public Vector3 normalized { get { float m = magnitude; return m > 0 ? new Vector3(x / m, y / m, z / m) : this; } }
    }

    public struct Quaternion
    {
        internal Vector3 forward;
        public static Quaternion LookRotation(Vector3 f) { return new Quaternion { forward = f.normalized }; }
    }

    public struct LayerMask
    {
        int value;
        public static implicit operator LayerMask(int v) { return new LayerMask { value = v }; }
        public static implicit operator int(LayerMask m) { return m.value; }
    }

    public static class Mathf
    {
        public const float Rad2Deg = 57.29578f;
        public static float Atan2(float y, float x) { return (float)Math.Atan2(y, x); }
        public static float Min(float a, float b) { return Math.Min(a, b); }
    }

    public static class Time
    {
        public static float time, deltaTime;
    }

    public static class Debug
    {
        public static readonly List<string> Lines = new List<string>();
        public static void Log(object o) { lock (Lines) Lines.Add(o.ToString()); }
        public static void LogError(object o) { lock (Lines) Lines.Add(o.ToString()); }
    }

    public struct RaycastHit { public Transform transform; }

    public static class Physics
    {
        public static bool Linecast(Vector3 a, Vector3 b, out RaycastHit hit, int mask) { hit = new RaycastHit(); return false; }
    }

    public class Object { public string name = ""; }

    public class Transform
    {
        public Vector3 position;
        public Vector3 localScale;
        public string name = "";
        Quaternion rot = Quaternion.LookRotation(new Vector3(0, 0, 1));
        public Quaternion rotation { get { return rot; } set { rot = value; } }
        public Vector3 forward { get { return rot.forward; } }
        public bool IsChildOf(Transform t) { return t == this; }
    }

    public enum PrimitiveType { Sphere, Capsule, Cylinder, Cube, Plane, Quad }

    public static class Input
    {
        public static float GetAxis(string name) { return 0; }
    }

    public class GameObject : Object
    {
        public static GameObject CreatePrimitive(PrimitiveType type) { return new GameObject(type.ToString()); }

        public readonly Transform transform = new Transform();
        readonly List<Component> components = new List<Component>();
        bool active = true;
        public GameObject(string name = "") { this.name = name; }

        public T AddComponent<T>() where T : Component, new()
        {
            var c = new T();
            c.gameObject = this;
            components.Add(c);
            Frame.All.Add(c);
            if (active) { Frame.Call(c, "Awake"); Frame.Call(c, "OnEnable"); }
            return c;
        }

        public T GetComponent<T>() where T : class
        {
            foreach (var c in components) if (c is T) return c as T;
            return null;
        }

        public void SetActive(bool on)
        {
            if (on && !active) { active = true; foreach (var c in components) { Frame.Call(c, "Awake"); Frame.Call(c, "OnEnable"); } }
            else if (!on && active) { active = false; foreach (var c in components) Frame.Call(c, "OnDisable"); }
        }
    }

    public class Component : Object
    {
        public GameObject gameObject;
        public Transform transform { get { return gameObject.transform; } }
        public T GetComponent<T>() where T : class { return gameObject.GetComponent<T>(); }
    }

    public class Behaviour : Component { }
    public class MonoBehaviour : Behaviour { }

    /// <summary>The main loop: frames call Update on every component, then deliver completions.</summary>
    public static class Frame
    {
        internal static readonly List<Component> All = new List<Component>();
        static readonly Queue<Action> completions = new Queue<Action>();
        internal static void Complete(Action a) { lock (completions) completions.Enqueue(a); }

        internal static void Call(object target, string method)
        {
            var m = target.GetType().GetMethod(method, BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
            if (m != null) m.Invoke(target, null);
        }

        public static int Pending { get { lock (completions) return completions.Count; } }

        public static void Run(float dt)
        {
            Time.deltaTime = dt;
            Time.time += dt;
            foreach (var c in All.ToArray()) Call(c, "Update");
            while (true)
            {
                Action a;
                lock (completions) { if (completions.Count == 0) break; a = completions.Dequeue(); }
                a();
            }
        }
    }

    public class AsyncOperation
    {
        public event Action<AsyncOperation> completed;
        internal void Fire() { if (completed != null) completed(this); }
    }
}

namespace UnityEngine.AI
{
    public class NavMeshAgent : Component
    {
        public float speed;
        public bool SetDestination(Vector3 v) { return true; }
    }
}

namespace UnityEngine.Networking
{
    public class UploadHandlerRaw { internal readonly byte[] data; public UploadHandlerRaw(byte[] d) { data = d; } }
    public class DownloadHandlerBuffer { public string text { get; internal set; } }
    public class UnityWebRequestAsyncOperation : AsyncOperation { }

    public class UnityWebRequest : IDisposable
    {
        public const string kHttpVerbPOST = "POST";
        static readonly HttpClient http = new HttpClient();
        readonly string url, method;
        readonly List<KeyValuePair<string, string>> headers = new List<KeyValuePair<string, string>>();
        public UploadHandlerRaw uploadHandler;
        public DownloadHandlerBuffer downloadHandler;
        public int timeout;
        public long responseCode { get; private set; }
        public string error { get; private set; }
        public UnityWebRequest(string url, string method) { this.url = url; this.method = method; }
        public void SetRequestHeader(string k, string v) { headers.Add(new KeyValuePair<string, string>(k, v)); }
        public void Dispose() { }

        public UnityWebRequestAsyncOperation SendWebRequest()
        {
            var op = new UnityWebRequestAsyncOperation();
            Task.Run(async () =>
            {
                try
                {
                    var req = new HttpRequestMessage(new HttpMethod(method), url);
                    req.Content = new ByteArrayContent(uploadHandler.data);
                    foreach (var h in headers)
                    {
                        if (h.Key == "Content-Type") req.Content.Headers.TryAddWithoutValidation(h.Key, h.Value);
                        else req.Headers.TryAddWithoutValidation(h.Key, h.Value);
                    }
                    var res = await http.SendAsync(req);
                    responseCode = (long)res.StatusCode;
                    downloadHandler.text = await res.Content.ReadAsStringAsync();
                }
                catch (Exception ex)
                {
                    responseCode = 0;
                    error = "Cannot connect to destination host (" + ex.GetType().Name + ")";
                }
                UnityEngine.Frame.Complete(op.Fire);
            });
            return op;
        }
    }
}
