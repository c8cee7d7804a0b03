// Reference client for the brainstem brain sidecar and control plane, for Unity and .NET
// servers. One file, .NET Standard 2.1 and C# 6 (Unity, .NET and Mono's mcs all compile it);
// no packages: JSON is written and read here, HTTP is System.Net.Http.HttpClient.
//
// Every call is async with a timeout and never blocks the calling thread: from Unity's main
// thread, `await` it (or use BrainLoop) and the continuation runs on the main thread again.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Brainstem
{
    // ---- tick models ----------------------------------------------------------------------

    public sealed class Vec3
    {
        public double X, Y, Z;
        public Vec3(double x, double y, double z) { X = x; Y = y; Z = z; }

        internal void Write(StringBuilder sb)
        {
            sb.Append("{\"x\":"); Json.Number(sb, X);
            sb.Append(",\"y\":"); Json.Number(sb, Y);
            sb.Append(",\"z\":"); Json.Number(sb, Z);
            sb.Append('}');
        }
    }

    public sealed class Target
    {
        public long Id;
        /// <summary>player | ai | zombie | animal</summary>
        public string Kind;
        public Vec3 Pos;
        public bool Hostile, Visible;
        /// <summary>Optional (null: not sent).</summary>
        public string Name;
        public double? Health;

        internal void Write(StringBuilder sb)
        {
            sb.Append("{\"id\":").Append(Id.ToString(CultureInfo.InvariantCulture));
            sb.Append(",\"kind\":"); Json.Quote(sb, Kind);
            sb.Append(",\"pos\":"); Pos.Write(sb);
            sb.Append(",\"hostile\":").Append(Hostile ? "true" : "false");
            sb.Append(",\"visible\":").Append(Visible ? "true" : "false");
            if (Name != null) { sb.Append(",\"name\":"); Json.Quote(sb, Name); }
            if (Health.HasValue) { sb.Append(",\"health\":"); Json.Number(sb, Health.Value); }
            sb.Append('}');
        }
    }

    public sealed class SelfState
    {
        public Vec3 Pos;
        public double HeadingDeg, Health, Blood, Hunger, Thirst;
        public bool HasWeapon;
        public int Ammo;

        internal void Write(StringBuilder sb)
        {
            sb.Append("{\"pos\":"); Pos.Write(sb);
            sb.Append(",\"heading_deg\":"); Json.Number(sb, HeadingDeg);
            sb.Append(",\"health\":"); Json.Number(sb, Health);
            sb.Append(",\"blood\":"); Json.Number(sb, Blood);
            sb.Append(",\"hunger\":"); Json.Number(sb, Hunger);
            sb.Append(",\"thirst\":"); Json.Number(sb, Thirst);
            sb.Append(",\"has_weapon\":").Append(HasWeapon ? "true" : "false");
            sb.Append(",\"ammo\":").Append(Ammo.ToString(CultureInfo.InvariantCulture));
            sb.Append('}');
        }
    }

    public sealed class Poi
    {
        public string Id, Kind;
        public Vec3 Pos;

        internal void Write(StringBuilder sb)
        {
            sb.Append("{\"id\":"); Json.Quote(sb, Id);
            sb.Append(",\"kind\":"); Json.Quote(sb, Kind);
            sb.Append(",\"pos\":"); Pos.Write(sb);
            sb.Append('}');
        }
    }

    public sealed class Heard
    {
        /// <summary>The speaker's id (`from` on the wire).</summary>
        public long From;
        public string Text;
        public double AtS;

        internal void Write(StringBuilder sb)
        {
            sb.Append("{\"from\":").Append(From.ToString(CultureInfo.InvariantCulture));
            sb.Append(",\"text\":"); Json.Quote(sb, Text);
            sb.Append(",\"at_s\":"); Json.Number(sb, AtS);
            sb.Append('}');
        }
    }

    public sealed class Snapshot
    {
        public long Agent;
        public double TimeS;
        public SelfState SelfState;
        public List<Target> Targets = new List<Target>();
        /// <summary>Optional lists and squad: null means not sent.</summary>
        public List<Vec3> Route;
        public List<Poi> Poi;
        public List<Heard> Heard;
        public string Squad;

        internal void Write(StringBuilder sb)
        {
            sb.Append("{\"agent\":").Append(Agent.ToString(CultureInfo.InvariantCulture));
            sb.Append(",\"time_s\":"); Json.Number(sb, TimeS);
            sb.Append(",\"self_state\":"); SelfState.Write(sb);
            Json.List(sb, "targets", Targets, t => t.Write(sb));
            if (Route != null) Json.List(sb, "route", Route, v => v.Write(sb));
            if (Poi != null) Json.List(sb, "poi", Poi, p => p.Write(sb));
            if (Heard != null) Json.List(sb, "heard", Heard, h => h.Write(sb));
            if (Squad != null) { sb.Append(",\"squad\":"); Json.Quote(sb, Squad); }
            sb.Append('}');
        }
    }

    public sealed class Profile
    {
        /// <summary>All optional: null means not sent (the bundle's population decides).</summary>
        public string Name;
        /// <summary>survivor | bandit | guard | trader</summary>
        public string Role;
        public bool? Coward;
        /// <summary>Any subset of the trait names, each 0..1.</summary>
        public Dictionary<string, double> Traits;

        internal void Write(StringBuilder sb)
        {
            sb.Append('{');
            bool first = true;
            if (Name != null) { Key(sb, "name", ref first); Json.Quote(sb, Name); }
            if (Role != null) { Key(sb, "role", ref first); Json.Quote(sb, Role); }
            if (Coward.HasValue) { Key(sb, "coward", ref first); sb.Append(Coward.Value ? "true" : "false"); }
            if (Traits != null)
            {
                Key(sb, "traits", ref first);
                sb.Append('{');
                bool firstTrait = true;
                foreach (var kv in Traits) { Key(sb, kv.Key, ref firstTrait); Json.Number(sb, kv.Value); }
                sb.Append('}');
            }
            sb.Append('}');
        }

        static void Key(StringBuilder sb, string key, ref bool first)
        {
            if (!first) sb.Append(',');
            first = false;
            Json.Quote(sb, key);
            sb.Append(':');
        }
    }

    public sealed class Tick
    {
        public Snapshot Snapshot;
        public Profile Profile = new Profile();

        internal void Write(StringBuilder sb)
        {
            sb.Append("{\"snapshot\":"); Snapshot.Write(sb);
            sb.Append(",\"profile\":"); (Profile ?? new Profile()).Write(sb);
            sb.Append('}');
        }
    }

    // ---- intent models --------------------------------------------------------------------

    public abstract class Intent
    {
        public readonly string Kind;
        protected Intent(string kind) { Kind = kind; }
    }

    /// <summary>speed: walk | jog | sprint</summary>
    public sealed class MoveTo : Intent { public Vec3 To; public string Speed; public MoveTo() : base("MoveTo") { } }
    public sealed class Engage : Intent { public long Target; public bool Fire; public Engage() : base("Engage") { } }
    public sealed class Say : Intent { public string Text, Channel, LineId; public Say() : base("Say") { } }
    public sealed class Face : Intent { public double YawDeg; public Face() : base("Face") { } }
    /// <summary>From: the threat's id (`from` on the wire).</summary>
    public sealed class Flee : Intent { public long From; public Flee() : base("Flee") { } }
    public sealed class Investigate : Intent { public Vec3 At; public Investigate() : base("Investigate") { } }
    public sealed class Emote : Intent { public string Name; public Emote() : base("Emote") { } }
    public sealed class Idle : Intent { public string Reason; public Idle() : base("Idle") { } }
    public sealed class Logoff : Intent { public Logoff() : base("Logoff") { } }
    /// <summary>A kind this client does not know (a newer sidecar); a mod ignores it.</summary>
    public sealed class UnknownIntent : Intent { public UnknownIntent(string kind) : base(kind) { } }

    /// <summary>What came back for one tick: a Reply, or a TickError for a tick the sidecar refused.</summary>
    public abstract class TickResult
    {
        public long Agent;
    }

    public sealed class Reply : TickResult
    {
        /// <summary>standing | crouched | prone</summary>
        public string Posture;
        /// <summary>Highest priority first.</summary>
        public List<Intent> Intents = new List<Intent>();
    }

    public sealed class TickError : TickResult
    {
        public string Code, Message;
        /// <summary>Each {path, message} as parsed JSON objects.</summary>
        public List<object> Details = new List<object>();
    }

    /// <summary>A whole call failed: network, timeout, a 4xx/5xx for the request, or a malformed reply.</summary>
    public sealed class BrainstemException : Exception
    {
        /// <summary>The HTTP status, or 0 when no HTTP answer came.</summary>
        public readonly int Status;
        public readonly string Code;
        public BrainstemException(int status, string code, string message) : base(status + " " + code + ": " + message + Hint(code))
        {
            Status = status;
            Code = code;
        }

        /// <summary>What a failure code means to a game-server owner: appended to the message.</summary>
        public static string Hint(string code)
        {
            switch (code)
            {
                case "unauthorized": return " (the token is wrong or missing: use the brain token that `brainstem up` prints)";
                case "network": return " (is `brainstem up` running, and the URL right?)";
                case "payload_too_large": return " (too many characters in one batch)";
                default: return "";
            }
        }
    }

    public enum TokenForm { Bearer, Header, Query }

    /// <summary>
    /// How a batch travels, for engines with their own HTTP (Unity's UnityWebRequest): POST
    /// `body` (JSON) to `url` with `headers`, then call done(status, body) once, on the thread
    /// the game wants its callbacks on; status 0 with the reason as body when no HTTP answer came.
    /// </summary>
    public interface IBatchTransport
    {
        void Post(string url, byte[] body, IList<KeyValuePair<string, string>> headers, double timeoutS, Action<int, string> done);
    }

    // ---- batch body and reply parsing (pure) ------------------------------------------------

    /// <summary>One /ticks body and the agents of its ticks, in order.</summary>
    public sealed class BatchBody
    {
        public readonly List<long> Agents;
        public readonly byte[] Bytes;

        internal BatchBody(List<long> agents, List<byte[]> parts, int size)
        {
            Agents = agents;
            Bytes = new byte[size];
            Bytes[0] = (byte)'[';
            int at = 1;
            for (int i = 0; i < parts.Count; i++)
            {
                if (i > 0) Bytes[at++] = (byte)',';
                Buffer.BlockCopy(parts[i], 0, Bytes, at, parts[i].Length);
                at += parts[i].Length;
            }
            Bytes[at] = (byte)']';
        }
    }

    public static class Batch
    {
        /// <summary>Most ticks the sidecar takes in one /ticks call; TicksAsync splits longer lists.</summary>
        public const int MaxTicks = 1024;
        /// <summary>Largest /ticks body the sidecar takes, in bytes.</summary>
        public const int MaxBodyBytes = 4 * 1024 * 1024;

        static readonly UTF8Encoding Utf8 = new UTF8Encoding(false);

        /// <summary>The /ticks body for ticks[start, start+count): a JSON array, UTF-8 without a byte-order mark.</summary>
        public static byte[] Build(IList<Tick> ticks, int start, int count)
        {
            var sb = new StringBuilder(512 * count + 2);
            sb.Append('[');
            for (int i = 0; i < count; i++)
            {
                if (i > 0) sb.Append(',');
                ticks[start + i].Write(sb);
            }
            sb.Append(']');
            return Utf8.GetBytes(sb.ToString());
        }

        public static byte[] Build(IList<Tick> ticks) { return Build(ticks, 0, ticks.Count); }

        /// <summary>The ticks packed in order into bodies of at most MaxTicks ticks and MaxBodyBytes bytes.</summary>
        public static List<BatchBody> Pack(IList<Tick> ticks)
        {
            var bodies = new List<BatchBody>();
            var parts = new List<byte[]>();
            var agents = new List<long>();
            int size = 2;
            foreach (var tick in ticks)
            {
                var sb = new StringBuilder(512);
                tick.Write(sb);
                byte[] part = Utf8.GetBytes(sb.ToString());
                if (parts.Count > 0 && (parts.Count == MaxTicks || size + 1 + part.Length > MaxBodyBytes))
                {
                    bodies.Add(new BatchBody(agents, parts, size));
                    parts = new List<byte[]>();
                    agents = new List<long>();
                    size = 2;
                }
                if (parts.Count > 0) size++;
                parts.Add(part);
                agents.Add(tick.Snapshot.Agent);
                size += part.Length;
            }
            if (parts.Count > 0) bodies.Add(new BatchBody(agents, parts, size));
            return bodies;
        }

        /// <summary>Parses a /ticks reply for a batch sent for `agents` in that order.</summary>
        public static List<TickResult> ParseReplies(string body, IList<long> agents)
        {
            var parsed = ParseJson(body);
            // ?errors=body answers a whole call's failure as a 200 with one error object.
            var failure = parsed as Dictionary<string, object>;
            if (failure != null && failure.ContainsKey("error")) throw Http.ErrorOf(200, body);
            var items = parsed as List<object>;
            if (items == null || items.Count != agents.Count)
                throw new BrainstemException(200, "bad_reply", "expected an array of " + agents.Count + " replies");
            var results = new List<TickResult>(items.Count);
            for (int i = 0; i < items.Count; i++) results.Add(ParseReply(items[i], agents[i]));
            return results;
        }

        /// <summary>One element of a /ticks reply (or a /tick reply) for the tick sent for agent `sent`.</summary>
        public static TickResult ParseReply(object item, long sent)
        {
            var obj = item as Dictionary<string, object>;
            if (obj == null) throw new BrainstemException(200, "bad_reply", "the reply for agent " + sent + " is not an object");
            object errorValue;
            if (obj.TryGetValue("error", out errorValue) && errorValue is Dictionary<string, object>)
            {
                var err = (Dictionary<string, object>)errorValue;
                var e = new TickError { Agent = sent, Code = Json.Str(err, "code") ?? "", Message = Json.Str(err, "message") ?? "" };
                object details;
                if (err.TryGetValue("details", out details) && details is List<object>) e.Details = (List<object>)details;
                return e;
            }
            try
            {
                var reply = new Reply { Agent = (long)Json.Num(obj, "agent"), Posture = Json.Str(obj, "posture") };
                foreach (var intent in (List<object>)obj["intents"]) reply.Intents.Add(ParseIntent((Dictionary<string, object>)intent));
                return reply;
            }
            catch (Exception ex) when (ex is KeyNotFoundException || ex is InvalidCastException || ex is NullReferenceException)
            {
                throw new BrainstemException(200, "bad_reply", "malformed reply for agent " + sent + ": " + ex.Message);
            }
        }

        public static Intent ParseIntent(Dictionary<string, object> d)
        {
            string kind = Json.Str(d, "kind");
            switch (kind)
            {
                case "MoveTo": return new MoveTo { To = Json.Vec(d, "to"), Speed = Json.Str(d, "speed") };
                case "Engage": return new Engage { Target = (long)Json.Num(d, "target"), Fire = (bool)d["fire"] };
                case "Say": return new Say { Text = Json.Str(d, "text"), Channel = Json.Str(d, "channel"), LineId = Json.Str(d, "line_id") };
                case "Face": return new Face { YawDeg = Json.Num(d, "yaw_deg") };
                case "Flee": return new Flee { From = (long)Json.Num(d, "from") };
                case "Investigate": return new Investigate { At = Json.Vec(d, "at") };
                case "Emote": return new Emote { Name = Json.Str(d, "name") };
                case "Idle": return new Idle { Reason = Json.Str(d, "reason") };
                case "Logoff": return new Logoff();
                default: return new UnknownIntent(kind ?? "");
            }
        }

        static object ParseJson(string body)
        {
            try { return Json.Parse(body); }
            catch (FormatException ex) { throw new BrainstemException(200, "bad_reply", "the reply is not JSON: " + ex.Message); }
        }
    }

    // ---- the sidecar client ---------------------------------------------------------------

    public sealed class BrainClient : IDisposable
    {
        /// <summary>Default time a call may take; keep it under your cadence period.</summary>
        public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(2);
        public const string DefaultUrl = "http://127.0.0.1:8088";

        readonly HttpClient http;
        readonly bool ownsHttp;
        readonly string baseUrl, token, query;
        readonly TokenForm form;

        public BrainClient(string url, string token, TokenForm form, TimeSpan timeout)
            : this(url, token, form, new HttpClient { Timeout = timeout }, true) { }

        public BrainClient(string url, string token) : this(url, token, TokenForm.Bearer, DefaultTimeout) { }

        /// <summary>With your own HttpClient (its Timeout applies); it is not disposed with this client.</summary>
        public BrainClient(string url, string token, TokenForm form, HttpClient http) : this(url, token, form, http, false) { }

        BrainClient(string url, string token, TokenForm form, HttpClient http, bool ownsHttp)
        {
            this.baseUrl = (url ?? DefaultUrl).TrimEnd('/');
            this.token = token;
            this.form = form;
            this.http = http;
            this.ownsHttp = ownsHttp;
            this.query = token != null && form == TokenForm.Query ? "?token=" + Uri.EscapeDataString(token) : "";
        }

        public void Dispose() { if (ownsHttp) http.Dispose(); }

        async Task<string> SendAsync(HttpMethod method, string path, byte[] body, CancellationToken ct)
        {
            using (var req = new HttpRequestMessage(method, baseUrl + path + query))
            {
                if (token != null && form == TokenForm.Bearer) req.Headers.Authorization = new AuthenticationHeaderValue("Bearer", token);
                if (token != null && form == TokenForm.Header) req.Headers.TryAddWithoutValidation("X-Brain-Token", token);
                if (body != null)
                {
                    req.Content = new ByteArrayContent(body);
                    req.Content.Headers.ContentType = new MediaTypeHeaderValue("application/json");
                }
                return await Http.SendAsync(http, req, ct).ConfigureAwait(false);
            }
        }

        public async Task<bool> HealthAsync(CancellationToken ct = default(CancellationToken))
        {
            try { return await SendAsync(HttpMethod.Get, "/health", null, ct).ConfigureAwait(false) == "ok"; }
            catch (BrainstemException) { return false; }
        }

        /// <summary>
        /// Every tick in one POST /ticks call (several when over Batch.MaxTicks or
        /// Batch.MaxBodyBytes); one result per tick, in order.
        /// </summary>
        public async Task<List<TickResult>> TicksAsync(IList<Tick> ticks, CancellationToken ct = default(CancellationToken))
        {
            var results = new List<TickResult>(ticks.Count);
            foreach (var body in Batch.Pack(ticks))
            {
                string reply = await SendAsync(HttpMethod.Post, "/ticks", body.Bytes, ct).ConfigureAwait(false);
                results.AddRange(Batch.ParseReplies(reply, body.Agents));
            }
            return results;
        }
    }

    /// <summary>
    /// The cadence loop for a game: call Step on a timer (2-10 Hz). It sends one batch unless
    /// the previous one is still out and not yet late; a reply to a batch older than the last
    /// one sent is dropped, and each character keeps its last intents until a newer reply.
    /// Callbacks run on the context Step was called from (Unity's main thread).
    /// </summary>
    public sealed class BrainLoop
    {
        public const double DefaultLateAfterS = 1.0;
        public const int DefaultMaxOutstanding = 4;

        readonly BrainClient client;
        // With a transport (Unity): the /ticks URL, the token's header and the call timeout.
        readonly IBatchTransport transport;
        readonly string ticksUrl;
        readonly List<KeyValuePair<string, string>> headers = new List<KeyValuePair<string, string>>();
        readonly double timeoutS;
        readonly Action<Reply> onReply;
        readonly Action<long?, string, string> onError;
        readonly double lateAfterS;
        readonly int maxOutstanding;
        readonly Dictionary<long, Reply> last = new Dictionary<long, Reply>();
        // Without a synchronization context (a console server) replies finish on pool threads.
        readonly object gate = new object();
        int seq, outstanding;
        bool lastOut;
        double lastSentAt;

        public int Sent, Applied, Stale, Failed;

        /// <param name="onError">(agent or null for a whole failed call, code, message)</param>
        public BrainLoop(BrainClient client, Action<Reply> onReply, Action<long?, string, string> onError,
            double lateAfterS = DefaultLateAfterS, int maxOutstanding = DefaultMaxOutstanding)
        {
            this.client = client;
            this.onReply = onReply;
            this.onError = onError;
            this.lateAfterS = lateAfterS;
            this.maxOutstanding = maxOutstanding;
        }

        /// <summary>
        /// The same loop over the engine's own HTTP (a UnityWebRequest transport): callbacks run
        /// where the transport calls done (Unity: the main thread). A call longer than timeoutS fails.
        /// </summary>
        public BrainLoop(string url, string token, TokenForm form, IBatchTransport transport, Action<Reply> onReply,
            Action<long?, string, string> onError, double timeoutS = 2, double lateAfterS = DefaultLateAfterS, int maxOutstanding = DefaultMaxOutstanding)
        {
            this.transport = transport;
            this.onReply = onReply;
            this.onError = onError;
            this.timeoutS = timeoutS;
            this.lateAfterS = lateAfterS;
            this.maxOutstanding = maxOutstanding;
            ticksUrl = (url ?? BrainClient.DefaultUrl).TrimEnd('/') + "/ticks";
            headers.Add(new KeyValuePair<string, string>("Content-Type", "application/json"));
            if (token == null) return;
            if (form == TokenForm.Bearer) headers.Add(new KeyValuePair<string, string>("Authorization", "Bearer " + token));
            else if (form == TokenForm.Header) headers.Add(new KeyValuePair<string, string>("X-Brain-Token", token));
            else ticksUrl += "?token=" + Uri.EscapeDataString(token);
        }

        /// <summary>"sent", "waiting" (the last batch is out, not late yet), "busy" (too many out) or "empty".</summary>
        public string Step(double now, Func<IList<Tick>> gather)
        {
            int mySeq;
            lock (gate)
            {
                if (lastOut && now - lastSentAt < lateAfterS) return "waiting";
                if (outstanding >= maxOutstanding) return "busy";
            }
            var ticks = gather();
            if (ticks.Count == 0) return "empty";
            lock (gate)
            {
                mySeq = ++seq;
                outstanding++;
                Sent++;
                lastOut = true;
                lastSentAt = now;
            }
            Run(mySeq, ticks);
            return "sent";
        }

        public Reply Last(long agent)
        {
            Reply r;
            lock (gate) return last.TryGetValue(agent, out r) ? r : null;
        }

        public void Forget(long agent) { lock (gate) last.Remove(agent); }

        async void Run(int mySeq, IList<Tick> ticks)
        {
            if (transport != null)
            {
                List<BatchBody> bodies;
                try { bodies = Batch.Pack(ticks); }
                catch (ArgumentException ex) { Finish(mySeq, null, new BrainstemException(0, "bad_tick", ex.Message)); return; }
                Send(mySeq, bodies, 0, new List<TickResult>(ticks.Count));
                return;
            }
            List<TickResult> results = null;
            BrainstemException failure = null;
            try { results = await client.TicksAsync(ticks); }
            catch (BrainstemException ex) { failure = ex; }
            catch (ArgumentException ex) { failure = new BrainstemException(0, "bad_tick", ex.Message); }
            Finish(mySeq, results, failure);
        }

        // The bodies of one step through the transport, one after another.
        void Send(int mySeq, List<BatchBody> bodies, int index, List<TickResult> results)
        {
            if (index == bodies.Count) { Finish(mySeq, results, null); return; }
            var body = bodies[index];
            transport.Post(ticksUrl, body.Bytes, headers, timeoutS, (status, text) =>
            {
                BrainstemException failure = null;
                try
                {
                    if (status == 0) failure = new BrainstemException(0, (text ?? "").IndexOf("timeout", StringComparison.OrdinalIgnoreCase) >= 0 ? "timeout" : "network", text ?? "");
                    else if (status < 200 || status > 299) failure = Http.ErrorOf(status, text ?? "");
                    else results.AddRange(Batch.ParseReplies(text ?? "", body.Agents));
                }
                catch (BrainstemException ex) { failure = ex; }
                if (failure != null) Finish(mySeq, null, failure);
                else Send(mySeq, bodies, index + 1, results);
            });
        }

        void Finish(int mySeq, List<TickResult> results, BrainstemException failure)
        {
            lock (gate)
            {
                outstanding--;
                if (mySeq != seq) { Stale++; return; }
                lastOut = false;
                if (failure != null) Failed++;
                else
                {
                    Applied++;
                    foreach (var r in results) { var reply = r as Reply; if (reply != null) last[reply.Agent] = reply; }
                }
            }
            if (failure != null) { onError(null, failure.Code, failure.Message); return; }
            foreach (var r in results)
            {
                var reply = r as Reply;
                if (reply != null) onReply(reply);
                else { var e = (TickError)r; onError(e.Agent, e.Code, e.Message); }
            }
        }
    }

    // ---- perception (pure) --------------------------------------------------------------------

    /// <summary>
    /// What each AI character perceives without querying the world per character: characters
    /// (players, AI, infected, animals) are registered when they spawn and removed when they
    /// die or are deleted; a character's targets are the registered ones within Radius metres,
    /// nearest first (ties by id), at most MaxTargets; visibility is the game's line-of-sight
    /// check, at most RaycastBudget per frame over all characters, an answer reused for
    /// LosTtlS, and a pair the budget did not reach keeps its last answer (never asked: not
    /// visible). The same rules as the Lua and DayZ kits, held to the same fixture.
    /// </summary>
    public sealed class Perception<T> where T : class
    {
        public const double DefaultRadius = 150;
        public const int DefaultRaycastBudget = 64;
        public const double DefaultLosTtlS = 1.0;
        public const int DefaultMaxTargets = 32;

        sealed class Entry { public long Id; public string Kind; public T Handle; }
        sealed class Sight { public bool Visible; public double At; }

        readonly double radius2;
        readonly int raycastBudget, maxTargets;
        readonly double losTtlS;
        readonly List<Entry> entries = new List<Entry>();
        readonly Dictionary<long, int> index = new Dictionary<long, int>();
        readonly Dictionary<long, Dictionary<long, Sight>> los = new Dictionary<long, Dictionary<long, Sight>>();
        int budgetLeft;
        /// <summary>Line-of-sight checks made so far.</summary>
        public int Raycasts;

        public Perception(double radius = DefaultRadius, int raycastBudget = DefaultRaycastBudget, double losTtlS = DefaultLosTtlS, int maxTargets = DefaultMaxTargets)
        {
            radius2 = radius * radius;
            this.raycastBudget = raycastBudget;
            this.losTtlS = losTtlS;
            this.maxTargets = maxTargets;
        }

        public int Count { get { return entries.Count; } }

        /// <summary>Registers a character; a known id is updated in place.</summary>
        public void Add(long id, string kind, T handle)
        {
            int i;
            if (index.TryGetValue(id, out i)) { entries[i].Kind = kind; entries[i].Handle = handle; return; }
            index[id] = entries.Count;
            entries.Add(new Entry { Id = id, Kind = kind, Handle = handle });
        }

        /// <summary>Forgets a character (swap-remove) and every line-of-sight answer about it.</summary>
        public void Remove(long id)
        {
            int i;
            if (!index.TryGetValue(id, out i)) return;
            int last = entries.Count - 1;
            if (i != last) { entries[i] = entries[last]; index[entries[i].Id] = i; }
            entries.RemoveAt(last);
            index.Remove(id);
            los.Remove(id);
            foreach (var row in los.Values) row.Remove(id);
        }

        public T HandleOf(long id)
        {
            int i;
            return index.TryGetValue(id, out i) ? entries[i].Handle : null;
        }

        /// <summary>Starts a frame that gathers: the raycast budget is full again.</summary>
        public void BeginFrame() { budgetLeft = raycastBudget; }

        /// <summary>The targets of character selfId at selfPos (metres, y up).</summary>
        public List<Target> Targets(long selfId, Vec3 selfPos, double now, Func<T, Vec3> positionOf, Func<T, T, bool> canSee, Func<string, T, bool> hostile)
        {
            var near = new List<KeyValuePair<double, Entry>>();
            foreach (var e in entries)
            {
                if (e.Id == selfId) continue;
                var p = positionOf(e.Handle);
                double dx = p.X - selfPos.X, dy = p.Y - selfPos.Y, dz = p.Z - selfPos.Z;
                double d2 = dx * dx + dy * dy + dz * dz;
                if (d2 <= radius2) near.Add(new KeyValuePair<double, Entry>(d2, e));
            }
            near.Sort((a, b) => a.Key != b.Key ? a.Key.CompareTo(b.Key) : a.Value.Id.CompareTo(b.Value.Id));
            T self = HandleOf(selfId);
            var targets = new List<Target>(Math.Min(near.Count, maxTargets));
            for (int k = 0; k < near.Count && k < maxTargets; k++)
            {
                var e = near[k].Value;
                targets.Add(new Target
                {
                    Id = e.Id, Kind = e.Kind, Pos = positionOf(e.Handle),
                    Hostile = hostile(e.Kind, e.Handle),
                    Visible = Visible(selfId, self, e.Id, e.Handle, now, canSee),
                });
            }
            return targets;
        }

        bool Visible(long a, T from, long b, T to, double now, Func<T, T, bool> canSee)
        {
            Dictionary<long, Sight> row;
            if (!los.TryGetValue(a, out row)) { row = new Dictionary<long, Sight>(); los[a] = row; }
            Sight known;
            row.TryGetValue(b, out known);
            if (known != null && now - known.At < losTtlS) return known.Visible;
            if (budgetLeft <= 0) return known != null && known.Visible;
            budgetLeft--;
            Raycasts++;
            bool v = canSee(from, to);
            if (known == null) row[b] = new Sight { Visible = v, At = now };
            else { known.Visible = v; known.At = now; }
            return v;
        }
    }

    // ---- request signing (control plane) ----------------------------------------------------

    public static class Signing
    {
        static readonly UTF8Encoding Utf8 = new UTF8Encoding(false);

        /// <summary>METHOD, the target as sent (query included), unix seconds and hex SHA-256 of the body.</summary>
        public static string CanonicalString(string method, string target, long timestamp, byte[] body)
        {
            using (var sha = SHA256.Create())
            {
                string digest = Hex(sha.ComputeHash(body ?? new byte[0]));
                return method.ToUpperInvariant() + "\n" + target + "\n" + timestamp.ToString(CultureInfo.InvariantCulture) + "\n" + digest;
            }
        }

        /// <summary>Hex HMAC-SHA256 keyed with the server key over the canonical string.</summary>
        public static string Signature(string key, string method, string target, long timestamp, byte[] body)
        {
            using (var hmac = new HMACSHA256(Utf8.GetBytes(key)))
                return Hex(hmac.ComputeHash(Utf8.GetBytes(CanonicalString(method, target, timestamp, body))));
        }

        /// <summary>Authorization, X-Service-Timestamp and X-Service-Signature for one request.</summary>
        public static Dictionary<string, string> SignedHeaders(string key, string method, string target, byte[] body, DateTimeOffset now)
        {
            long ts = now.ToUnixTimeSeconds();
            return new Dictionary<string, string>
            {
                { "Authorization", "Bearer " + key },
                { "X-Service-Timestamp", ts.ToString(CultureInfo.InvariantCulture) },
                { "X-Service-Signature", Signature(key, method, target, ts, body) },
            };
        }

        internal static string Hex(byte[] bytes)
        {
            var sb = new StringBuilder(bytes.Length * 2);
            foreach (byte b in bytes) sb.Append(b.ToString("x2", CultureInfo.InvariantCulture));
            return sb.ToString();
        }
    }

    /// <summary>The config pull's answer: NotModified when the ETag sent is still current.</summary>
    public sealed class ConfigResult
    {
        public bool NotModified;
        public string ETag;
        /// <summary>The bundle as parsed JSON (null when NotModified) and its raw text.</summary>
        public Dictionary<string, object> Bundle;
        public string Raw;
    }

    /// <summary>Signed calls a server key may make: read its server's config, post its telemetry.</summary>
    public sealed class ControlPlaneClient : IDisposable
    {
        readonly HttpClient http;
        readonly string baseUrl, serverId, serverKey;
        string lastSignature = "";

        public ControlPlaneClient(string url, string serverId, string serverKey)
        {
            this.baseUrl = url.TrimEnd('/');
            this.serverId = serverId;
            this.serverKey = serverKey;
            this.http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        }

        public void Dispose() { http.Dispose(); }

        async Task<HttpRequestMessage> SignedAsync(HttpMethod method, string target, byte[] body)
        {
            // The control plane refuses a signature it has already seen (a replay), and the same
            // request in the same second signs the same: wait for the next second instead.
            var now = DateTimeOffset.UtcNow;
            var headers = Signing.SignedHeaders(serverKey, method.Method, target, body, now);
            if (headers["X-Service-Signature"] == lastSignature)
            {
                await Task.Delay(1000 - now.Millisecond).ConfigureAwait(false);
                headers = Signing.SignedHeaders(serverKey, method.Method, target, body, DateTimeOffset.UtcNow);
            }
            lastSignature = headers["X-Service-Signature"];
            var req = new HttpRequestMessage(method, baseUrl + target);
            foreach (var kv in headers) req.Headers.TryAddWithoutValidation(kv.Key, kv.Value);
            if (body != null)
            {
                req.Content = new ByteArrayContent(body);
                req.Content.Headers.ContentType = new MediaTypeHeaderValue("application/json");
            }
            return req;
        }

        public async Task<ConfigResult> GetConfigAsync(string etag = null, CancellationToken ct = default(CancellationToken))
        {
            using (var req = await SignedAsync(HttpMethod.Get, "/v1/config?server=" + Uri.EscapeDataString(serverId), null).ConfigureAwait(false))
            {
                if (etag != null) req.Headers.TryAddWithoutValidation("If-None-Match", etag);
                using (var res = await http.SendAsync(req, ct).ConfigureAwait(false))
                {
                    string tag = res.Headers.ETag != null ? res.Headers.ETag.ToString() : null;
                    if (res.StatusCode == HttpStatusCode.NotModified) return new ConfigResult { NotModified = true, ETag = tag };
                    string text = await Http.TextOf(res).ConfigureAwait(false);
                    if (!res.IsSuccessStatusCode) throw Http.ErrorOf((int)res.StatusCode, text);
                    return new ConfigResult { ETag = tag, Raw = text, Bundle = (Dictionary<string, object>)Json.Parse(text) };
                }
            }
        }

        /// <summary>Posts one telemetry report (its JSON text); returns the answer's JSON text.</summary>
        public async Task<string> PostTelemetryAsync(string reportJson, CancellationToken ct = default(CancellationToken))
        {
            using (var req = await SignedAsync(HttpMethod.Post, "/v1/telemetry", Encoding.UTF8.GetBytes(reportJson)).ConfigureAwait(false))
                return await Http.SendAsync(http, req, ct).ConfigureAwait(false);
        }
    }

    static class Http
    {
        /// <summary>The body of a 2xx answer; anything else becomes a BrainstemException.</summary>
        internal static async Task<string> SendAsync(HttpClient http, HttpRequestMessage req, CancellationToken ct)
        {
            HttpResponseMessage res;
            try { res = await http.SendAsync(req, ct).ConfigureAwait(false); }
            catch (TaskCanceledException) when (!ct.IsCancellationRequested) { throw new BrainstemException(0, "timeout", "no answer within " + http.Timeout.TotalSeconds + " s"); }
            catch (HttpRequestException ex) { throw new BrainstemException(0, "network", ex.Message); }
            using (res)
            {
                string text = await TextOf(res).ConfigureAwait(false);
                if (!res.IsSuccessStatusCode) throw ErrorOf((int)res.StatusCode, text);
                return text;
            }
        }

        /// <summary>The body as UTF-8, whatever charset the answer names (or does not).</summary>
        internal static async Task<string> TextOf(HttpResponseMessage res)
        {
            byte[] bytes = await res.Content.ReadAsByteArrayAsync().ConfigureAwait(false);
            return Encoding.UTF8.GetString(bytes);
        }

        /// <summary>The documented error body {"error": {"code", "message"}} of a failed call.</summary>
        internal static BrainstemException ErrorOf(int status, string text)
        {
            try
            {
                var err = (Dictionary<string, object>)((Dictionary<string, object>)Json.Parse(text))["error"];
                return new BrainstemException(status, Json.Str(err, "code"), Json.Str(err, "message"));
            }
            catch (Exception)
            {
                return new BrainstemException(status, "http_error", text.Length > 200 ? text.Substring(0, 200) : text);
            }
        }
    }

    // ---- JSON -------------------------------------------------------------------------------

    /// <summary>
    /// A small strict JSON reader (objects are Dictionary&lt;string, object&gt;, arrays
    /// List&lt;object&gt;, numbers double, null null) and the writer helpers the models use.
    /// </summary>
    public static class Json
    {
        public static object Parse(string text)
        {
            int pos = 0;
            object value = Value(text, ref pos);
            Skip(text, ref pos);
            if (pos != text.Length) throw new FormatException("trailing characters at " + pos);
            return value;
        }

        public static void Quote(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                        else sb.Append(c);
                        break;
                }
            }
            sb.Append('"');
        }

        /// <summary>`,"key":[item,item,...]` with each item written by `write`.</summary>
        internal static void List<T>(StringBuilder sb, string key, IList<T> items, Action<T> write)
        {
            sb.Append(",\"").Append(key).Append("\":[");
            for (int i = 0; i < items.Count; i++)
            {
                if (i > 0) sb.Append(',');
                write(items[i]);
            }
            sb.Append(']');
        }

        // FRACTION[k] is k/1000 without its trailing zeros ("5" for 500, "001" for 1).
        static readonly string[] Fraction = Fractions();

        static string[] Fractions()
        {
            var f = new string[1000];
            for (int k = 1; k < 1000; k++) f[k] = k.ToString("000", CultureInfo.InvariantCulture).TrimEnd('0');
            return f;
        }

        /// <summary>
        /// A JSON number with at most three decimals (millimetres for positions, as the Lua and
        /// DayZ clients write them): this runs for every field of every tick on the game
        /// thread, and the round-trip format ("R") costs several times as much.
        /// </summary>
        public static void Number(StringBuilder sb, double d)
        {
            if (double.IsNaN(d) || double.IsInfinity(d)) throw new ArgumentException("a tick number is NaN or infinite");
            double a = Math.Abs(d);
            if (a >= 9e12) { sb.Append(d.ToString("R", CultureInfo.InvariantCulture)); return; }
            long m = (long)Math.Floor(a * 1000 + 0.5);
            long whole = m / 1000;
            int k = (int)(m % 1000);
            if (d < 0 && m != 0) sb.Append('-');
            Digits(sb, whole);
            if (k != 0) sb.Append('.').Append(Fraction[k]);
        }

        // The decimal digits of a non-negative whole number, without a string per number.
        static void Digits(StringBuilder sb, long v)
        {
            if (v < 10) { sb.Append((char)('0' + v)); return; }
            int start = sb.Length;
            while (v > 0) { sb.Append((char)('0' + v % 10)); v /= 10; }
            for (int i = start, j = sb.Length - 1; i < j; i++, j--) { char c = sb[i]; sb[i] = sb[j]; sb[j] = c; }
        }

        internal static string Str(Dictionary<string, object> d, string key)
        {
            object v;
            return d.TryGetValue(key, out v) ? v as string : null;
        }

        internal static double Num(Dictionary<string, object> d, string key) { return (double)d[key]; }

        internal static Vec3 Vec(Dictionary<string, object> d, string key)
        {
            var v = (Dictionary<string, object>)d[key];
            return new Vec3(Num(v, "x"), Num(v, "y"), Num(v, "z"));
        }

        static void Skip(string t, ref int p)
        {
            while (p < t.Length && (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r')) p++;
        }

        static FormatException Bad(int p, string what) { return new FormatException(what + " at " + p); }

        static object Value(string t, ref int p)
        {
            Skip(t, ref p);
            if (p >= t.Length) throw Bad(p, "unexpected end");
            char c = t[p];
            if (c == '{')
            {
                var obj = new Dictionary<string, object>();
                p++;
                Skip(t, ref p);
                if (p < t.Length && t[p] == '}') { p++; return obj; }
                while (true)
                {
                    Skip(t, ref p);
                    if (p >= t.Length || t[p] != '"') throw Bad(p, "expected a key");
                    string key = String(t, ref p);
                    Skip(t, ref p);
                    if (p >= t.Length || t[p] != ':') throw Bad(p, "expected :");
                    p++;
                    obj[key] = Value(t, ref p);
                    Skip(t, ref p);
                    if (p < t.Length && t[p] == ',') { p++; continue; }
                    if (p < t.Length && t[p] == '}') { p++; return obj; }
                    throw Bad(p, "expected , or }");
                }
            }
            if (c == '[')
            {
                var list = new List<object>();
                p++;
                Skip(t, ref p);
                if (p < t.Length && t[p] == ']') { p++; return list; }
                while (true)
                {
                    list.Add(Value(t, ref p));
                    Skip(t, ref p);
                    if (p < t.Length && t[p] == ',') { p++; continue; }
                    if (p < t.Length && t[p] == ']') { p++; return list; }
                    throw Bad(p, "expected , or ]");
                }
            }
            if (c == '"') return String(t, ref p);
            if (string.CompareOrdinal(t, p, "true", 0, 4) == 0) { p += 4; return true; }
            if (string.CompareOrdinal(t, p, "false", 0, 5) == 0) { p += 5; return false; }
            if (string.CompareOrdinal(t, p, "null", 0, 4) == 0) { p += 4; return null; }
            int start = p;
            double fast;
            if (Decimal(t, ref p, out fast)) return fast;
            p = start;
            while (p < t.Length && "+-0123456789.eE".IndexOf(t[p]) >= 0) p++;
            double d;
            if (p == start || !double.TryParse(t.Substring(start, p - start), NumberStyles.Float, CultureInfo.InvariantCulture, out d))
                throw Bad(start, "bad value");
            return d;
        }

        // Powers of ten that a double holds exactly.
        static readonly double[] Tens = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };

        // A plain decimal (-12.375: no exponent, at most 15 digits) read without a substring:
        // the digits as a whole number divided by an exact power of ten is the correctly
        // rounded double. False (p unchanged by the caller) for anything else.
        static bool Decimal(string t, ref int p, out double value)
        {
            value = 0;
            bool negative = p < t.Length && t[p] == '-';
            if (negative) p++;
            long mantissa = 0;
            int digits = 0, decimals = 0;
            bool point = false;
            for (; p < t.Length; p++)
            {
                char c = t[p];
                if (c >= '0' && c <= '9')
                {
                    if (++digits > 15) return false;
                    mantissa = mantissa * 10 + (c - '0');
                    if (point) decimals++;
                }
                else if (c == '.' && !point) point = true;
                else if (c == 'e' || c == 'E' || c == '+' || c == '-') return false;
                else break;
            }
            if (digits == 0 || (point && decimals == 0)) return false;
            value = mantissa / Tens[decimals];
            if (negative) value = -value;
            return true;
        }

        static string String(string t, ref int p)
        {
            // Most strings have no escape: one substring.
            int end = p + 1;
            while (end < t.Length && t[end] != '"' && t[end] != '\\') end++;
            if (end < t.Length && t[end] == '"')
            {
                string plain = t.Substring(p + 1, end - p - 1);
                p = end + 1;
                return plain;
            }
            var sb = new StringBuilder();
            p++;
            while (true)
            {
                if (p >= t.Length) throw Bad(p, "unterminated string");
                char c = t[p++];
                if (c == '"') return sb.ToString();
                if (c != '\\') { sb.Append(c); continue; }
                if (p >= t.Length) throw Bad(p, "unterminated string");
                char e = t[p++];
                switch (e)
                {
                    case '"': sb.Append('"'); break;
                    case '\\': sb.Append('\\'); break;
                    case '/': sb.Append('/'); break;
                    case 'b': sb.Append('\b'); break;
                    case 'f': sb.Append('\f'); break;
                    case 'n': sb.Append('\n'); break;
                    case 'r': sb.Append('\r'); break;
                    case 't': sb.Append('\t'); break;
                    case 'u':
                        int code;
                        if (p + 4 > t.Length || !int.TryParse(t.Substring(p, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out code))
                            throw Bad(p, "bad \\u escape");
                        sb.Append((char)code);
                        p += 4;
                        break;
                    default: throw Bad(p, "bad escape");
                }
            }
        }
    }
}
