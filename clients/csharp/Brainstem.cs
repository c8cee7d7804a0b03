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

        internal void Write(JsonWriter w)
        {
            w.Raw("{\"x\":"); w.Number(X);
            w.Raw(",\"y\":"); w.Number(Y);
            w.Raw(",\"z\":"); w.Number(Z);
            w.Byte('}');
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

        internal void Write(JsonWriter w)
        {
            w.Raw("{\"id\":"); w.Long(Id);
            w.Raw(",\"kind\":"); w.Quote(Kind);
            w.Raw(",\"pos\":"); Pos.Write(w);
            w.Raw(Hostile ? ",\"hostile\":true" : ",\"hostile\":false");
            w.Raw(Visible ? ",\"visible\":true" : ",\"visible\":false");
            if (Name != null) { w.Raw(",\"name\":"); w.Quote(Name); }
            if (Health.HasValue) { w.Raw(",\"health\":"); w.Number(Health.Value); }
            w.Byte('}');
        }
    }

    public sealed class SelfState
    {
        public Vec3 Pos;
        public double HeadingDeg, Health, Blood, Hunger, Thirst;
        public bool HasWeapon;
        public int Ammo;

        internal void Write(JsonWriter w)
        {
            w.Raw("{\"pos\":"); Pos.Write(w);
            w.Raw(",\"heading_deg\":"); w.Number(HeadingDeg);
            w.Raw(",\"health\":"); w.Number(Health);
            w.Raw(",\"blood\":"); w.Number(Blood);
            w.Raw(",\"hunger\":"); w.Number(Hunger);
            w.Raw(",\"thirst\":"); w.Number(Thirst);
            w.Raw(HasWeapon ? ",\"has_weapon\":true,\"ammo\":" : ",\"has_weapon\":false,\"ammo\":"); w.Long(Ammo);
            w.Byte('}');
        }
    }

    public sealed class Poi
    {
        public string Id, Kind;
        public Vec3 Pos;

        internal void Write(JsonWriter w)
        {
            w.Raw("{\"id\":"); w.Quote(Id);
            w.Raw(",\"kind\":"); w.Quote(Kind);
            w.Raw(",\"pos\":"); Pos.Write(w);
            w.Byte('}');
        }
    }

    public sealed class Heard
    {
        /// <summary>The speaker's id (`from` on the wire).</summary>
        public long From;
        public string Text;
        public double AtS;

        internal void Write(JsonWriter w)
        {
            w.Raw("{\"from\":"); w.Long(From);
            w.Raw(",\"text\":"); w.Quote(Text);
            w.Raw(",\"at_s\":"); w.Number(AtS);
            w.Byte('}');
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

        // Plain loops, not a writer per list: a delegate per list per tick is garbage on the game thread.
        internal void Write(JsonWriter w)
        {
            w.Raw("{\"agent\":"); w.Long(Agent);
            w.Raw(",\"time_s\":"); w.Number(TimeS);
            w.Raw(",\"self_state\":"); SelfState.Write(w);
            w.Raw(",\"targets\":[");
            if (Targets != null) for (int i = 0; i < Targets.Count; i++) { if (i > 0) w.Byte(','); Targets[i].Write(w); }
            w.Byte(']');
            if (Route != null)
            {
                w.Raw(",\"route\":[");
                for (int i = 0; i < Route.Count; i++) { if (i > 0) w.Byte(','); Route[i].Write(w); }
                w.Byte(']');
            }
            if (Poi != null)
            {
                w.Raw(",\"poi\":[");
                for (int i = 0; i < Poi.Count; i++) { if (i > 0) w.Byte(','); Poi[i].Write(w); }
                w.Byte(']');
            }
            if (Heard != null)
            {
                w.Raw(",\"heard\":[");
                for (int i = 0; i < Heard.Count; i++) { if (i > 0) w.Byte(','); Heard[i].Write(w); }
                w.Byte(']');
            }
            if (Squad != null) { w.Raw(",\"squad\":"); w.Quote(Squad); }
            w.Byte('}');
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

        internal void Write(JsonWriter w)
        {
            w.Byte('{');
            bool first = true;
            if (Name != null) { Key(w, "name", ref first); w.Quote(Name); }
            if (Role != null) { Key(w, "role", ref first); w.Quote(Role); }
            if (Coward.HasValue) { Key(w, "coward", ref first); w.Raw(Coward.Value ? "true" : "false"); }
            if (Traits != null)
            {
                Key(w, "traits", ref first);
                w.Byte('{');
                bool firstTrait = true;
                foreach (var kv in Traits) { Key(w, kv.Key, ref firstTrait); w.Number(kv.Value); }
                w.Byte('}');
            }
            w.Byte('}');
        }

        static void Key(JsonWriter w, string key, ref bool first)
        {
            if (!first) w.Byte(',');
            first = false;
            w.Quote(key);
            w.Byte(':');
        }
    }

    public sealed class Tick
    {
        public Snapshot Snapshot;
        public Profile Profile = new Profile();

        internal void Write(JsonWriter w)
        {
            w.Raw("{\"snapshot\":"); Snapshot.Write(w);
            w.Raw(",\"profile\":");
            if (Profile != null) Profile.Write(w); else w.Raw("{}");
            w.Byte('}');
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
        public List<Intent> Intents;

        public Reply() { Intents = new List<Intent>(); }

        internal Reply(List<Intent> intents) { Intents = intents; }
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

        internal BatchBody(List<long> agents, byte[] bytes)
        {
            Agents = agents;
            Bytes = bytes;
        }
    }

    public static class Batch
    {
        /// <summary>Most ticks the sidecar takes in one /ticks call; TicksAsync splits longer lists.</summary>
        public const int MaxTicks = 1024;
        /// <summary>Largest /ticks body the sidecar takes, in bytes.</summary>
        public const int MaxBodyBytes = 4 * 1024 * 1024;

        // One writer per thread, kept between batches: building a batch allocates only its body.
        [ThreadStatic] static JsonWriter writer;

        static JsonWriter Writer()
        {
            var w = writer ?? (writer = new JsonWriter());
            w.Clear();
            return w;
        }

        /// <summary>The /ticks body for ticks[start, start+count): a JSON array, UTF-8 without a byte-order mark.</summary>
        public static byte[] Build(IList<Tick> ticks, int start, int count)
        {
            var w = Writer();
            w.Byte('[');
            for (int i = 0; i < count; i++)
            {
                if (i > 0) w.Byte(',');
                ticks[start + i].Write(w);
            }
            w.Byte(']');
            return w.ToArray(0, w.Length);
        }

        public static byte[] Build(IList<Tick> ticks) { return Build(ticks, 0, ticks.Count); }

        /// <summary>The ticks packed in order into bodies of at most MaxTicks ticks and MaxBodyBytes bytes.</summary>
        public static List<BatchBody> Pack(IList<Tick> ticks)
        {
            var bodies = new List<BatchBody>(1);
            var agents = new List<long>(Math.Min(ticks.Count, MaxTicks));
            var w = Writer();
            w.Byte('[');
            for (int i = 0; i < ticks.Count; i++)
            {
                var tick = ticks[i];
                int mark = w.Length;
                if (agents.Count > 0) w.Byte(',');
                tick.Write(w);
                // The body so far plus its closing bracket; a tick that does not fit starts the next body.
                if (agents.Count > 0 && (agents.Count == MaxTicks || w.Length + 1 > MaxBodyBytes))
                {
                    w.Truncate(mark);
                    w.Byte(']');
                    bodies.Add(new BatchBody(agents, w.ToArray(0, w.Length)));
                    agents = new List<long>(Math.Min(ticks.Count - i, MaxTicks));
                    w.Clear();
                    w.Byte('[');
                    tick.Write(w);
                }
                agents.Add(tick.Snapshot.Agent);
            }
            if (agents.Count > 0)
            {
                w.Byte(']');
                bodies.Add(new BatchBody(agents, w.ToArray(0, w.Length)));
            }
            return bodies;
        }

        /// <summary>Parses a /ticks reply for a batch sent for `agents` in that order.</summary>
        public static List<TickResult> ParseReplies(string body, IList<long> agents)
        {
            int p = 0;
            Json.Skip(body, ref p);
            if (p < body.Length && body[p] == '[')
            {
                try { return ReplyReader.Read(body, agents); }
                catch (FormatException ex) { throw new BrainstemException(200, "bad_reply", "the reply is not JSON: " + ex.Message); }
            }
            var parsed = ParseJson(body);
            // ?errors=body answers a whole call's failure as a 200 with one error object.
            var failure = parsed as Dictionary<string, object>;
            if (failure != null && failure.ContainsKey("error")) throw Http.ErrorOf(200, body);
            throw ReplyReader.Count(agents.Count);
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

    /// <summary>
    /// Reads a /ticks reply straight into Reply and TickError objects, on the game thread: no
    /// dictionary, list or boxed number per JSON value, keys compared in place, the words that
    /// repeat (kinds, postures, speeds) given as shared strings, fields a kind does not have
    /// skipped without being built. Same results and the same failures as ParseReply over a
    /// parsed document.
    /// </summary>
    static class ReplyReader
    {
        static readonly string[] ReplyKeys = { "agent", "posture", "intents", "error" };
        static readonly string[] IntentKeys = { "kind", "to", "speed", "target", "fire", "text", "channel", "line_id", "yaw_deg", "from", "at", "name", "reason" };
        static readonly string[] ErrorKeys = { "code", "message", "details" };
        static readonly string[] VecKeys = { "x", "y", "z" };
        static readonly string[] Words = { "MoveTo", "Engage", "Say", "Face", "Flee", "Investigate", "Emote", "Idle", "Logoff",
            "standing", "crouched", "prone", "walk", "jog", "sprint", "proximity" };

        internal static BrainstemException Count(int n) { return new BrainstemException(200, "bad_reply", "expected an array of " + n + " replies"); }

        static BrainstemException Malformed(long sent, string what) { return new BrainstemException(200, "bad_reply", "malformed reply for agent " + sent + ": " + what); }

        static void Expect(string t, ref int p, char c, string what)
        {
            Json.Skip(t, ref p);
            if (p >= t.Length || t[p] != c) throw new FormatException(what + " at " + p);
            p++;
        }

        // Between members: true for ',' (another follows), false for the closing bracket.
        static bool More(string t, ref int p, char close)
        {
            Json.Skip(t, ref p);
            if (p < t.Length && t[p] == ',') { p++; return true; }
            if (p < t.Length && t[p] == close) { p++; return false; }
            throw new FormatException("expected , or " + close + " at " + p);
        }

        // Opens an object or array: false when it is empty (and then closed).
        static bool Open(string t, ref int p, char open, char close)
        {
            Expect(t, ref p, open, "expected " + open);
            Json.Skip(t, ref p);
            if (p < t.Length && t[p] == close) { p++; return false; }
            return true;
        }

        // The next member's key: its index in names, or -1; p is past the colon.
        static int Key(string t, ref int p, string[] names)
        {
            Json.Skip(t, ref p);
            if (p >= t.Length || t[p] != '"') throw new FormatException("expected a key at " + p);
            int found = Word(t, ref p, names);
            Expect(t, ref p, ':', "expected :");
            Json.Skip(t, ref p);
            return found;
        }

        // The string at p, matched against names without a copy: its index, or -1.
        static int Word(string t, ref int p, string[] names)
        {
            int end = p + 1;
            while (end < t.Length && t[end] != '"' && t[end] != '\\') end++;
            if (end >= t.Length || t[end] != '"') return Array.IndexOf(names, Json.String(t, ref p));
            int start = p + 1, n = end - start;
            p = end + 1;
            for (int i = 0; i < names.Length; i++)
                if (names[i].Length == n && string.CompareOrdinal(t, start, names[i], 0, n) == 0) return i;
            return -1;
        }

        // A string value (a shared one for the words that repeat), or null for any other value, as Json.Str reads it.
        static string Str(string t, ref int p)
        {
            if (t[p] != '"') { Json.SkipValue(t, ref p); return null; }
            int at = p;
            int i = Word(t, ref p, Words);
            if (i >= 0) return Words[i];
            p = at;
            return Json.String(t, ref p);
        }

        // A number value, or null (the value skipped) for any other.
        static double? Num(string t, ref int p)
        {
            char c = t[p];
            if (c == '-' || (c >= '0' && c <= '9')) return Json.Number(t, ref p);
            Json.SkipValue(t, ref p);
            return null;
        }

        // An {x, y, z} value, or null (the value skipped) when it is not one.
        static Vec3 Vec(string t, ref int p)
        {
            if (t[p] != '{') { Json.SkipValue(t, ref p); return null; }
            double? x = null, y = null, z = null;
            if (Open(t, ref p, '{', '}'))
            {
                do
                {
                    int k = Key(t, ref p, VecKeys);
                    if (k == 0) x = Num(t, ref p);
                    else if (k == 1) y = Num(t, ref p);
                    else if (k == 2) z = Num(t, ref p);
                    else Json.SkipValue(t, ref p);
                } while (More(t, ref p, '}'));
            }
            return x.HasValue && y.HasValue && z.HasValue ? new Vec3(x.Value, y.Value, z.Value) : null;
        }

        internal static List<TickResult> Read(string t, IList<long> agents)
        {
            int p = 0;
            var results = new List<TickResult>(agents.Count);
            if (Open(t, ref p, '[', ']'))
            {
                do
                {
                    if (results.Count == agents.Count) throw Count(agents.Count);
                    results.Add(Element(t, ref p, agents[results.Count]));
                } while (More(t, ref p, ']'));
            }
            Json.Skip(t, ref p);
            if (p != t.Length) throw new FormatException("trailing characters at " + p);
            if (results.Count != agents.Count) throw Count(agents.Count);
            return results;
        }

        static TickResult Element(string t, ref int p, long sent)
        {
            Json.Skip(t, ref p);
            if (p >= t.Length || t[p] != '{')
            {
                Json.SkipValue(t, ref p);
                throw new BrainstemException(200, "bad_reply", "the reply for agent " + sent + " is not an object");
            }
            double? agent = null;
            bool agentBad = false, intentsBad = false;
            string posture = null;
            List<Intent> intents = null;
            TickError error = null;
            if (Open(t, ref p, '{', '}'))
            {
                do
                {
                    switch (Key(t, ref p, ReplyKeys))
                    {
                        case 0: agent = Num(t, ref p); agentBad = !agent.HasValue; break;
                        case 1: posture = Str(t, ref p); break;
                        case 2:
                            intents = null;
                            intentsBad = t[p] != '[';
                            if (intentsBad) Json.SkipValue(t, ref p);
                            else intents = Intents(t, ref p, sent);
                            break;
                        case 3:
                            if (t[p] == '{') error = Error(t, ref p, sent);
                            else Json.SkipValue(t, ref p);
                            break;
                        default: Json.SkipValue(t, ref p); break;
                    }
                } while (More(t, ref p, '}'));
            }
            if (error != null) return error;
            if (agentBad || !agent.HasValue) throw Malformed(sent, agentBad ? "agent is not a number" : "no agent");
            if (intentsBad || intents == null) throw Malformed(sent, intentsBad ? "intents is not an array" : "no intents");
            return new Reply(intents) { Agent = (long)agent.Value, Posture = posture };
        }

        static TickError Error(string t, ref int p, long sent)
        {
            var e = new TickError { Agent = sent, Code = "", Message = "" };
            if (!Open(t, ref p, '{', '}')) return e;
            do
            {
                switch (Key(t, ref p, ErrorKeys))
                {
                    case 0: e.Code = Str(t, ref p) ?? ""; break;
                    case 1: e.Message = Str(t, ref p) ?? ""; break;
                    case 2:
                        var details = Json.Value(t, ref p) as List<object>;
                        e.Details = details ?? new List<object>();
                        break;
                    default: Json.SkipValue(t, ref p); break;
                }
            } while (More(t, ref p, '}'));
            return e;
        }

        static List<Intent> Intents(string t, ref int p, long sent)
        {
            var list = new List<Intent>(2);
            if (!Open(t, ref p, '[', ']')) return list;
            do
            {
                Json.Skip(t, ref p);
                if (p >= t.Length || t[p] != '{')
                {
                    Json.SkipValue(t, ref p);
                    throw Malformed(sent, "an intent is not an object");
                }
                list.Add(Intent(t, ref p, sent));
            } while (More(t, ref p, ']'));
            return list;
        }

        // Every field any kind has, read as it comes (the kind may come last); the kind then takes its own.
        static Intent Intent(string t, ref int p, long sent)
        {
            string kind = null, speed = null, text = null, channel = null, lineId = null, name = null, reason = null;
            Vec3 to = null, at = null;
            double? target = null, yaw = null, from = null;
            bool? fire = null;
            if (Open(t, ref p, '{', '}'))
            {
                do
                {
                    switch (Key(t, ref p, IntentKeys))
                    {
                        case 0: kind = Str(t, ref p); break;
                        case 1: to = Vec(t, ref p); break;
                        case 2: speed = Str(t, ref p); break;
                        case 3: target = Num(t, ref p); break;
                        case 4:
                            if (string.CompareOrdinal(t, p, "true", 0, 4) == 0) { p += 4; fire = true; }
                            else if (string.CompareOrdinal(t, p, "false", 0, 5) == 0) { p += 5; fire = false; }
                            else { Json.SkipValue(t, ref p); fire = null; }
                            break;
                        case 5: text = Str(t, ref p); break;
                        case 6: channel = Str(t, ref p); break;
                        case 7: lineId = Str(t, ref p); break;
                        case 8: yaw = Num(t, ref p); break;
                        case 9: from = Num(t, ref p); break;
                        case 10: at = Vec(t, ref p); break;
                        case 11: name = Str(t, ref p); break;
                        case 12: reason = Str(t, ref p); break;
                        default: Json.SkipValue(t, ref p); break;
                    }
                } while (More(t, ref p, '}'));
            }
            switch (kind)
            {
                case "MoveTo": return new MoveTo { To = to ?? Missing<Vec3>(sent, "to"), Speed = speed };
                case "Engage": return new Engage { Target = (long)(target ?? Missing<double>(sent, "target")), Fire = fire ?? Missing<bool>(sent, "fire") };
                case "Say": return new Say { Text = text, Channel = channel, LineId = lineId };
                case "Face": return new Face { YawDeg = yaw ?? Missing<double>(sent, "yaw_deg") };
                case "Flee": return new Flee { From = (long)(from ?? Missing<double>(sent, "from")) };
                case "Investigate": return new Investigate { At = at ?? Missing<Vec3>(sent, "at") };
                case "Emote": return new Emote { Name = name };
                case "Idle": return new Idle { Reason = reason };
                case "Logoff": return new Logoff();
                default: return new UnknownIntent(kind ?? "");
            }
        }

        static T Missing<T>(long sent, string field) { throw Malformed(sent, "the intent's " + field + " is missing or of the wrong type"); }
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

        // Over a transport (Unity) the batch is built and handed over synchronously, with no
        // async state machine on the main thread; over HttpClient it is awaited.
        void Run(int mySeq, IList<Tick> ticks)
        {
            if (transport == null) { RunAsync(mySeq, ticks); return; }
            List<BatchBody> bodies;
            try { bodies = Batch.Pack(ticks); }
            catch (ArgumentException ex) { Finish(mySeq, null, new BrainstemException(0, "bad_tick", ex.Message)); return; }
            Send(mySeq, bodies, 0, new List<TickResult>(ticks.Count));
        }

        async void RunAsync(int mySeq, IList<Tick> ticks)
        {
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
                if (failure == null)
                    foreach (var r in results) { var reply = r as Reply; if (reply != null) last[reply.Agent] = reply; }
            }
            // Counted only after the callbacks ran: a caller that sees Applied or Failed move (a
            // console server polling from another thread) has every reply of that batch already.
            if (failure != null)
            {
                try { onError(null, failure.Code, failure.Message); }
                finally { lock (gate) Failed++; }
                return;
            }
            try
            {
                foreach (var r in results)
                {
                    var reply = r as Reply;
                    if (reply != null) onReply(reply);
                    else { var e = (TickError)r; onError(e.Agent, e.Code, e.Message); }
                }
            }
            finally { lock (gate) Applied++; }
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
    /// Writes a batch's JSON straight into UTF-8 bytes, in one buffer kept between batches:
    /// this runs on the game thread for every field of every tick, so it makes no string, no
    /// StringBuilder and no intermediate copy (a string per tick, then its bytes, cost about
    /// as much as writing it).
    /// </summary>
    internal sealed class JsonWriter
    {
        byte[] buf = new byte[16 * 1024];
        int len;

        public int Length { get { return len; } }

        public void Clear() { len = 0; }

        public void Truncate(int length) { len = length; }

        public byte[] ToArray(int start, int count)
        {
            var bytes = new byte[count];
            Buffer.BlockCopy(buf, start, bytes, 0, count);
            return bytes;
        }

        void Grow(int more)
        {
            int size = buf.Length;
            while (size < len + more) size *= 2;
            Array.Resize(ref buf, size);
        }

        public void Byte(char c)
        {
            if (len == buf.Length) Grow(1);
            buf[len++] = (byte)c;
        }

        /// <summary>An ASCII constant (the shape's keys and punctuation).</summary>
        public void Raw(string ascii)
        {
            int n = ascii.Length;
            if (len + n > buf.Length) Grow(n);
            for (int i = 0; i < n; i++) buf[len + i] = (byte)ascii[i];
            len += n;
        }

        public void Long(long v)
        {
            if (v < 0)
            {
                if (v == long.MinValue) { Raw("-9223372036854775808"); return; }
                Byte('-');
                v = -v;
            }
            Digits(v);
        }

        // The decimal digits of a non-negative whole number, written backwards into place.
        void Digits(long v)
        {
            int n = 1;
            for (long t = v; t >= 10; t /= 10) n++;
            if (len + n > buf.Length) Grow(n);
            for (int i = len + n - 1; i >= len; i--) { buf[i] = (byte)('0' + v % 10); v /= 10; }
            len += n;
        }

        /// <summary>The same number Json.Number writes: at most three decimals.</summary>
        public void Number(double d)
        {
            if (double.IsNaN(d) || double.IsInfinity(d)) throw new ArgumentException("a tick number is NaN or infinite");
            double a = Math.Abs(d);
            if (a >= 9e12) { Raw(d.ToString("R", CultureInfo.InvariantCulture)); return; }
            long m = (long)Math.Floor(a * 1000 + 0.5);
            long whole = m / 1000;
            int k = (int)(m % 1000);
            if (d < 0 && m != 0) Byte('-');
            Digits(whole);
            if (k != 0) { Byte('.'); Raw(Json.Fraction[k]); }
        }

        /// <summary>A JSON string as UTF-8, escaped as Json.Quote escapes it (a lone surrogate becomes U+FFFD).</summary>
        public void Quote(string s)
        {
            // Three bytes per UTF-16 unit at most, six for an escape, and the quotes.
            int n = s.Length;
            if (len + n * 6 + 2 > buf.Length) Grow(n * 6 + 2);
            var b = buf;
            int at = len;
            b[at++] = (byte)'"';
            for (int i = 0; i < n; i++)
            {
                char c = s[i];
                if (c < 0x80)
                {
                    if (c >= 0x20 && c != '"' && c != '\\') { b[at++] = (byte)c; continue; }
                    b[at++] = (byte)'\\';
                    switch (c)
                    {
                        case '"': b[at++] = (byte)'"'; break;
                        case '\\': b[at++] = (byte)'\\'; break;
                        case '\n': b[at++] = (byte)'n'; break;
                        case '\r': b[at++] = (byte)'r'; break;
                        case '\t': b[at++] = (byte)'t'; break;
                        default:
                            b[at++] = (byte)'u'; b[at++] = (byte)'0'; b[at++] = (byte)'0';
                            b[at++] = (byte)"0123456789abcdef"[c >> 4]; b[at++] = (byte)"0123456789abcdef"[c & 15];
                            break;
                    }
                }
                else if (c < 0x800)
                {
                    b[at++] = (byte)(0xC0 | (c >> 6));
                    b[at++] = (byte)(0x80 | (c & 0x3F));
                }
                else if (char.IsHighSurrogate(c) && i + 1 < n && char.IsLowSurrogate(s[i + 1]))
                {
                    int cp = char.ConvertToUtf32(c, s[++i]);
                    b[at++] = (byte)(0xF0 | (cp >> 18));
                    b[at++] = (byte)(0x80 | ((cp >> 12) & 0x3F));
                    b[at++] = (byte)(0x80 | ((cp >> 6) & 0x3F));
                    b[at++] = (byte)(0x80 | (cp & 0x3F));
                }
                else
                {
                    int cp = char.IsSurrogate(c) ? 0xFFFD : c;
                    b[at++] = (byte)(0xE0 | (cp >> 12));
                    b[at++] = (byte)(0x80 | ((cp >> 6) & 0x3F));
                    b[at++] = (byte)(0x80 | (cp & 0x3F));
                }
            }
            b[at++] = (byte)'"';
            len = at;
        }
    }

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

        // FRACTION[k] is k/1000 without its trailing zeros ("5" for 500, "001" for 1).
        internal static readonly string[] Fraction = Fractions();

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

        internal static void Skip(string t, ref int p)
        {
            while (p < t.Length && (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r')) p++;
        }

        static FormatException Bad(int p, string what) { return new FormatException(what + " at " + p); }

        internal static object Value(string t, ref int p)
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
            return Number(t, ref p);
        }

        /// <summary>The number at p.</summary>
        internal static double Number(string t, ref int p)
        {
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

        /// <summary>Passes over the value at p, as strictly as Value reads it, building nothing.</summary>
        internal static void SkipValue(string t, ref int p)
        {
            Skip(t, ref p);
            if (p >= t.Length) throw Bad(p, "unexpected end");
            char c = t[p];
            if (c == '{' || c == '[')
            {
                char close = c == '{' ? '}' : ']';
                p++;
                Skip(t, ref p);
                if (p < t.Length && t[p] == close) { p++; return; }
                while (true)
                {
                    if (c == '{')
                    {
                        Skip(t, ref p);
                        if (p >= t.Length || t[p] != '"') throw Bad(p, "expected a key");
                        SkipString(t, ref p);
                        Skip(t, ref p);
                        if (p >= t.Length || t[p] != ':') throw Bad(p, "expected :");
                        p++;
                    }
                    SkipValue(t, ref p);
                    Skip(t, ref p);
                    if (p < t.Length && t[p] == ',') { p++; continue; }
                    if (p < t.Length && t[p] == close) { p++; return; }
                    throw Bad(p, "expected , or " + close);
                }
            }
            if (c == '"') { SkipString(t, ref p); return; }
            if (string.CompareOrdinal(t, p, "true", 0, 4) == 0) { p += 4; return; }
            if (string.CompareOrdinal(t, p, "false", 0, 5) == 0) { p += 5; return; }
            if (string.CompareOrdinal(t, p, "null", 0, 4) == 0) { p += 4; return; }
            Number(t, ref p);
        }

        static void SkipString(string t, ref int p)
        {
            int end = p + 1;
            while (end < t.Length && t[end] != '"')
            {
                if (t[end] == '\\')
                {
                    if (end + 1 < t.Length && t[end + 1] == 'u')
                    {
                        int code;
                        if (end + 6 > t.Length || !int.TryParse(t.Substring(end + 2, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out code))
                            throw Bad(end + 1, "bad \\u escape");
                        end += 6;
                        continue;
                    }
                    if (end + 1 >= t.Length || "\"\\/bfnrt".IndexOf(t[end + 1]) < 0) throw Bad(end + 1, "bad escape");
                    end += 2;
                    continue;
                }
                end++;
            }
            if (end >= t.Length) throw Bad(end, "unterminated string");
            p = end + 1;
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

        internal static string String(string t, ref int p)
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
