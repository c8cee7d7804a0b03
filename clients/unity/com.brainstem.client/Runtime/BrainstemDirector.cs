// The one object per scene that talks to the sidecar: every `cadenceS` it gathers every
// registered character's tick (targets from the perception registry, line of sight by
// Physics.Linecast within a per-frame budget), sends one POST /ticks through
// UnityWebRequest, and applies each reply on the main thread.
using System.Collections.Generic;
using UnityEngine;

namespace Brainstem
{
    public class BrainstemDirector : MonoBehaviour
    {
        [Tooltip("The sidecar: `brainstem up` (npm start) serves it on 8088.")]
        public string url = "http://127.0.0.1:8088";
        [Tooltip("The `brain token` that `brainstem up` prints.")]
        public string token = "";
        [Tooltip("Seconds between batches (0.5 = 2 Hz).")]
        public float cadenceS = 0.5f;
        [Tooltip("Metres within which characters perceive each other.")]
        public float sightRadius = 60;
        [Tooltip("Line-of-sight checks (Physics.Linecast) per gathering frame, over all characters.")]
        public int raycastBudget = Perception<BrainstemCharacter>.DefaultRaycastBudget;
        [Tooltip("Layers that block line of sight.")]
        public LayerMask sightBlockers = ~0;

        static readonly List<BrainstemCharacter> pending = new List<BrainstemCharacter>();
        static BrainstemDirector active;

        Perception<BrainstemCharacter> world;
        // Every enabled character, and the id each is registered under. A character's fields
        // may be set after OnEnable (AddComponent at run time), so the registry is brought in
        // step with the ids on every gather.
        readonly HashSet<BrainstemCharacter> members = new HashSet<BrainstemCharacter>();
        Dictionary<long, BrainstemCharacter> characters = new Dictionary<long, BrainstemCharacter>();
        BrainLoop loop;
        float nextStep;

        /// <summary>Calls so far: sent, applied, failed.</summary>
        public int Sent { get { return loop == null ? 0 : loop.Sent; } }
        public int Applied { get { return loop == null ? 0 : loop.Applied; } }
        public int Failed { get { return loop == null ? 0 : loop.Failed; } }
        public int Stale { get { return loop == null ? 0 : loop.Stale; } }

        internal static void Register(BrainstemCharacter c)
        {
            if (active != null) active.members.Add(c);
            else pending.Add(c);
        }

        internal static void Unregister(BrainstemCharacter c)
        {
            pending.Remove(c);
            if (active != null) active.members.Remove(c);
        }

        void Sync()
        {
            var now = new Dictionary<long, BrainstemCharacter>();
            foreach (var c in members) if (c != null) now[c.agentId] = c;
            foreach (var kv in characters)
            {
                BrainstemCharacter c;
                if (!now.TryGetValue(kv.Key, out c) || c != kv.Value) world.Remove(kv.Key);
            }
            foreach (var kv in now) world.Add(kv.Key, kv.Value.kind, kv.Value);
            characters = now;
        }

        void Awake()
        {
            world = new Perception<BrainstemCharacter>(sightRadius, raycastBudget);
            if (string.IsNullOrEmpty(token))
                Debug.LogError("[brainstem] no token set on BrainstemDirector: every call will be refused (unauthorized). Paste the brain token that `brainstem up` prints.");
            loop = new BrainLoop(url, string.IsNullOrEmpty(token) ? null : token, TokenForm.Header, new UnityWebRequestTransport(), Apply,
                (agent, code, message) => Debug.LogError("[brainstem] " + (agent.HasValue ? "agent " + agent.Value : "call") + " failed: " + code + ": " + message),
                timeoutS: cadenceS * 2);
            active = this;
            foreach (var c in pending) members.Add(c);
            pending.Clear();
        }

        void OnDestroy()
        {
            if (active == this) active = null;
        }

        void Update()
        {
            if (Time.time < nextStep) return;
            nextStep = Time.time + cadenceS;
            loop.Step(Time.time, Gather);
        }

        static Vec3 At(BrainstemCharacter c)
        {
            var p = c.transform.position;
            return new Vec3(p.x, p.y, p.z);
        }

        bool CanSee(BrainstemCharacter from, BrainstemCharacter to)
        {
            var eye = from.transform.position + Vector3.up * 1.6f;
            var chest = to.transform.position + Vector3.up * 1.0f;
            RaycastHit hit;
            return !Physics.Linecast(eye, chest, out hit, sightBlockers) || hit.transform == to.transform || hit.transform.IsChildOf(to.transform);
        }

        static bool Hostile(string kind, BrainstemCharacter c) { return kind == "player" || kind == "zombie"; }

        IList<Tick> Gather()
        {
            Sync();
            world.BeginFrame();
            var ticks = new List<Tick>();
            foreach (var c in characters.Values)
            {
                if (c.kind != "ai") continue;
                var pos = At(c);
                var route = new List<Vec3>();
                foreach (var w in c.route) if (w != null) route.Add(new Vec3(w.position.x, w.position.y, w.position.z));
                var fwd = c.transform.forward;
                ticks.Add(new Tick
                {
                    Snapshot = new Snapshot
                    {
                        Agent = c.agentId, TimeS = Time.time, Route = route.Count > 0 ? route : null,
                        SelfState = new SelfState
                        {
                            Pos = pos, HeadingDeg = (Mathf.Atan2(fwd.x, fwd.z) * Mathf.Rad2Deg + 360) % 360,
                            Health = c.health, Blood = 5000, Hunger = 20, Thirst = 20, HasWeapon = c.hasWeapon, Ammo = c.ammo,
                        },
                        Targets = world.Targets(c.agentId, pos, Time.time, At, CanSee, Hostile),
                    },
                    Profile = new Profile { Name = c.characterName, Role = c.role },
                });
            }
            return ticks;
        }

        void Apply(Reply reply)
        {
            BrainstemCharacter c;
            if (characters.TryGetValue(reply.Agent, out c) && c != null)
                c.Apply(reply, id => { var t = world.HandleOf(id); return t != null ? t.transform : null; });
        }
    }
}
