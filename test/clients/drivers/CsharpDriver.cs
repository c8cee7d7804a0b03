// Drives clients/csharp/Brainstem.cs for test/clients/csharp.test.ts; compiled with it by mcs.
// Usage: mono driver.exe COMMAND ARGS... ; prints JSON on stdout.
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Brainstem;

/// <summary>A transport that answers every call at once with 200 and one body.</summary>
sealed class Answering : IBatchTransport
{
    readonly string body;
    public Answering(string body) { this.body = body; }
    public void Post(string url, byte[] bytes, IList<KeyValuePair<string, string>> headers, double timeoutS, Action<int, string> done) { done(200, body); }
}

static class CsharpDriver
{
    static Dictionary<string, object> O(object v) { return (Dictionary<string, object>)v; }
    static List<object> L(object v) { return (List<object>)v; }
    static double D(object v) { return (double)v; }
    static Vec3 V(object v) { var o = O(v); return new Vec3(D(o["x"]), D(o["y"]), D(o["z"])); }
    static object Opt(Dictionary<string, object> o, string k) { object v; return o.TryGetValue(k, out v) ? v : null; }

    static Tick TickOf(object value)
    {
        var d = O(value);
        var s = O(d["snapshot"]);
        var st = O(s["self_state"]);
        var snap = new Snapshot
        {
            Agent = (long)D(s["agent"]), TimeS = D(s["time_s"]),
            SelfState = new SelfState
            {
                Pos = V(st["pos"]), HeadingDeg = D(st["heading_deg"]), Health = D(st["health"]), Blood = D(st["blood"]),
                Hunger = D(st["hunger"]), Thirst = D(st["thirst"]), HasWeapon = (bool)st["has_weapon"], Ammo = (int)D(st["ammo"]),
            },
            Squad = Opt(s, "squad") as string,
        };
        foreach (var tv in L(s["targets"]))
        {
            var t = O(tv);
            snap.Targets.Add(new Target
            {
                Id = (long)D(t["id"]), Kind = (string)t["kind"], Pos = V(t["pos"]), Hostile = (bool)t["hostile"], Visible = (bool)t["visible"],
                Name = Opt(t, "name") as string, Health = Opt(t, "health") == null ? (double?)null : D(t["health"]),
            });
        }
        if (Opt(s, "route") != null) { snap.Route = new List<Vec3>(); foreach (var p in L(s["route"])) snap.Route.Add(V(p)); }
        if (Opt(s, "poi") != null) { snap.Poi = new List<Poi>(); foreach (var p in L(s["poi"])) snap.Poi.Add(new Poi { Id = (string)O(p)["id"], Kind = (string)O(p)["kind"], Pos = V(O(p)["pos"]) }); }
        if (Opt(s, "heard") != null) { snap.Heard = new List<Heard>(); foreach (var h in L(s["heard"])) snap.Heard.Add(new Heard { From = (long)D(O(h)["from"]), Text = (string)O(h)["text"], AtS = D(O(h)["at_s"]) }); }
        var pr = O(d["profile"]);
        var profile = new Profile { Name = Opt(pr, "name") as string, Role = Opt(pr, "role") as string, Coward = Opt(pr, "coward") as bool? };
        if (Opt(pr, "traits") != null) { profile.Traits = new Dictionary<string, double>(); foreach (var kv in O(pr["traits"])) profile.Traits[kv.Key] = D(kv.Value); }
        return new Tick { Snapshot = snap, Profile = profile };
    }

    static List<Tick> Ticks(string path)
    {
        var list = new List<Tick>();
        foreach (var t in L(O(Json.Parse(File.ReadAllText(path, Encoding.UTF8)))["ticks"])) list.Add(TickOf(t));
        return list;
    }

    static void Vec(StringBuilder sb, Vec3 v)
    {
        sb.Append("{\"x\":"); Json.Number(sb, v.X); sb.Append(",\"y\":"); Json.Number(sb, v.Y); sb.Append(",\"z\":"); Json.Number(sb, v.Z); sb.Append('}');
    }

    static void Intent(StringBuilder sb, Intent i)
    {
        sb.Append("{\"kind\":"); Json.Quote(sb, i.Kind);
        if (i is MoveTo) { var m = (MoveTo)i; sb.Append(",\"to\":"); Vec(sb, m.To); sb.Append(",\"speed\":"); Json.Quote(sb, m.Speed); }
        else if (i is Engage) { var e = (Engage)i; sb.Append(",\"target\":").Append(e.Target).Append(",\"fire\":").Append(e.Fire ? "true" : "false"); }
        else if (i is Say) { var s = (Say)i; sb.Append(",\"text\":"); Json.Quote(sb, s.Text); sb.Append(",\"channel\":"); Json.Quote(sb, s.Channel); sb.Append(",\"line_id\":"); Json.Quote(sb, s.LineId); }
        else if (i is Face) { sb.Append(",\"yaw_deg\":"); Json.Number(sb, ((Face)i).YawDeg); }
        else if (i is Flee) { sb.Append(",\"from\":").Append(((Flee)i).From); }
        else if (i is Investigate) { sb.Append(",\"at\":"); Vec(sb, ((Investigate)i).At); }
        else if (i is Emote) { sb.Append(",\"name\":"); Json.Quote(sb, ((Emote)i).Name); }
        else if (i is Idle) { sb.Append(",\"reason\":"); Json.Quote(sb, ((Idle)i).Reason); }
        sb.Append('}');
    }

    static void Result(StringBuilder sb, TickResult r)
    {
        sb.Append("{\"agent\":").Append(r.Agent);
        var e = r as TickError;
        if (e != null)
        {
            sb.Append(",\"error\":{\"code\":"); Json.Quote(sb, e.Code); sb.Append(",\"message\":"); Json.Quote(sb, e.Message); sb.Append("}}");
            return;
        }
        var reply = (Reply)r;
        sb.Append(",\"posture\":"); Json.Quote(sb, reply.Posture);
        sb.Append(",\"intents\":[");
        for (int k = 0; k < reply.Intents.Count; k++) { if (k > 0) sb.Append(','); Intent(sb, reply.Intents[k]); }
        sb.Append("]}");
    }

    static string Results(IList<TickResult> results)
    {
        var sb = new StringBuilder("[");
        for (int i = 0; i < results.Count; i++) { if (i > 0) sb.Append(','); Result(sb, results[i]); }
        return sb.Append(']').ToString();
    }

    static TokenForm Form(string s) { return s == "bearer" ? TokenForm.Bearer : s == "header" ? TokenForm.Header : TokenForm.Query; }

    static int Main(string[] args)
    {
        Console.OutputEncoding = new UTF8Encoding(false);
        var stdout = Console.OpenStandardOutput();
        Action<string> print = text => { var b = new UTF8Encoding(false).GetBytes(text); stdout.Write(b, 0, b.Length); };
        switch (args[0])
        {
            case "build":
            {
                var body = Batch.Build(Ticks(args[1]));
                stdout.Write(body, 0, body.Length);
                return 0;
            }
            case "parse":
            {
                var f = O(Json.Parse(File.ReadAllText(args[1], Encoding.UTF8)));
                var agents = new List<long>();
                foreach (var a in L(f["agents"])) agents.Add((long)D(a));
                print(Results(Batch.ParseReplies((string)f["body"], agents)));
                return 0;
            }
            case "sign":
            {
                var sb = new StringBuilder("[");
                bool first = true;
                foreach (var vv in L(O(Json.Parse(File.ReadAllText(args[1], Encoding.UTF8)))["vectors"]))
                {
                    var v = O(vv);
                    var body = Encoding.UTF8.GetBytes((string)v["body"]);
                    long ts = (long)D(v["timestamp"]);
                    var headers = Signing.SignedHeaders((string)v["key"], (string)v["method"], (string)v["target"], body, DateTimeOffset.FromUnixTimeMilliseconds(ts * 1000 + 900));
                    if (!first) sb.Append(',');
                    first = false;
                    sb.Append("{\"canonical\":"); Json.Quote(sb, Signing.CanonicalString((string)v["method"], (string)v["target"], ts, body));
                    sb.Append(",\"signature\":"); Json.Quote(sb, Signing.Signature((string)v["key"], (string)v["method"], (string)v["target"], ts, body));
                    sb.Append(",\"headers\":{");
                    bool firstHeader = true;
                    foreach (var kv in headers) { if (!firstHeader) sb.Append(','); firstHeader = false; Json.Quote(sb, kv.Key); sb.Append(':'); Json.Quote(sb, kv.Value); }
                    sb.Append("}}");
                }
                print(sb.Append(']').ToString());
                return 0;
            }
            case "live":
            {
                using (var client = new BrainClient(args[1], args[2], Form(args[3]), TimeSpan.FromSeconds(60)))
                {
                    bool health = client.HealthAsync().Result;
                    var results = client.TicksAsync(Ticks(args[4])).Result;
                    print("{\"health\":" + (health ? "true" : "false") + ",\"replies\":" + Results(results) + "}");
                }
                return 0;
            }
            case "refused":
            case "silent":
            {
                bool silent = args[0] == "silent";
                using (var client = silent ? new BrainClient(args[1], null, TokenForm.Bearer, TimeSpan.FromSeconds(0.5)) : new BrainClient(args[1], args[2], Form(args[3]), TimeSpan.FromSeconds(60)))
                {
                    try { client.TicksAsync(Ticks(silent ? args[2] : args[4])).Wait(); print("{\"raised\":false}"); }
                    catch (AggregateException ex)
                    {
                        var b = (BrainstemException)ex.InnerException;
                        print("{\"raised\":true,\"status\":" + b.Status + ",\"code\":\"" + b.Code + "\"}");
                    }
                }
                return 0;
            }
            case "loop":
            {
                // The cadence loop against a real sidecar: a step while the batch is out waits,
                // the reply is applied, then the next step sends again.
                using (var client = new BrainClient(args[1], args[2], Form(args[3]), TimeSpan.FromSeconds(60)))
                {
                    var ticks = Ticks(args[4]);
                    var applied = new List<long>();
                    var errors = new List<string>();
                    var loop = new BrainLoop(client, r => { lock (applied) applied.Add(r.Agent); },
                        (agent, code, message) => { lock (errors) errors.Add((agent.HasValue ? agent.Value.ToString() : "call") + ":" + code); },
                        lateAfterS: 5);
                    var trace = new List<string>();
                    int gathered = 0;
                    Func<IList<Tick>> gather = () => { gathered++; return ticks; };
                    trace.Add(loop.Step(0, gather));
                    trace.Add(loop.Step(0.5, gather));
                    while (loop.Applied + loop.Failed == 0) Thread.Sleep(10);
                    trace.Add(loop.Step(1.0, gather));
                    while (loop.Applied + loop.Failed < 2) Thread.Sleep(10);
                    var sb = new StringBuilder("{\"trace\":[");
                    for (int i = 0; i < trace.Count; i++) { if (i > 0) sb.Append(','); Json.Quote(sb, trace[i]); }
                    sb.Append("],\"applied\":").Append(applied.Count).Append(",\"errors\":[");
                    for (int i = 0; i < errors.Count; i++) { if (i > 0) sb.Append(','); Json.Quote(sb, errors[i]); }
                    sb.Append("],\"gathered\":").Append(gathered).Append(",\"sent\":").Append(loop.Sent)
                        .Append(",\"stale\":").Append(loop.Stale).Append(",\"lastPosture\":");
                    Json.Quote(sb, loop.Last(ticks[0].Snapshot.Agent).Posture);
                    print(sb.Append('}').ToString());
                }
                return 0;
            }
            case "malformed":
            {
                // Each answer through the loop's own path (a transport answering 200 with that
                // body): the first failure's code, or "ok" when every reply was applied.
                var f = O(Json.Parse(File.ReadAllText(args[1], Encoding.UTF8)));
                var tick = Ticks(args[2])[0];
                var sb = new StringBuilder("[");
                foreach (var c in L(f["cases"]))
                {
                    var kase = O(c);
                    string code = null;
                    int applied = 0;
                    var ticks = new List<Tick>();
                    foreach (var a in L(kase["agents"])) ticks.Add(new Tick { Snapshot = new Snapshot { Agent = (long)D(a), TimeS = tick.Snapshot.TimeS, SelfState = tick.Snapshot.SelfState }, Profile = tick.Profile });
                    var loop = new BrainLoop("http://sidecar.invalid", null, TokenForm.Bearer, new Answering((string)kase["body"]),
                        r => applied++, (agent, errorCode, message) => { if (code == null) code = errorCode; });
                    loop.Step(0, () => ticks);
                    if (sb.Length > 1) sb.Append(',');
                    sb.Append("{\"name\":"); Json.Quote(sb, (string)kase["name"]);
                    sb.Append(",\"got\":"); Json.Quote(sb, code ?? (applied == ticks.Count ? "ok" : "nothing"));
                    sb.Append('}');
                }
                print(sb.Append(']').ToString());
                return 0;
            }
            case "perception":
            {
                // The registry fixture: each frame's targets per gathered character and the raycasts paid.
                var f = O(Json.Parse(File.ReadAllText(args[1], Encoding.UTF8)));
                var o = O(f["options"]);
                var world = new Perception<string>(D(o["radius"]), (int)D(o["raycast_budget"]), D(o["los_ttl_s"]), (int)D(o["max_targets"]));
                var pos = new Dictionary<string, Vec3>();
                var sb = new StringBuilder("[");
                bool firstFrame = true;
                foreach (var stepValue in L(f["steps"]))
                {
                    var step = O(stepValue);
                    string op = (string)step["op"];
                    if (op == "add") { string id = ((long)D(step["id"])).ToString(); pos[id] = V(step["pos"]); world.Add((long)D(step["id"]), (string)step["kind"], id); }
                    else if (op == "remove") { pos.Remove(((long)D(step["id"])).ToString()); world.Remove((long)D(step["id"])); }
                    else if (op == "move") pos[((long)D(step["id"])).ToString()] = V(step["pos"]);
                    else
                    {
                        var blocked = new HashSet<string>();
                        foreach (var pair in L(step["blocked"])) blocked.Add((long)D(L(pair)[0]) + ">" + (long)D(L(pair)[1]));
                        world.BeginFrame();
                        int before = world.Raycasts;
                        if (!firstFrame) sb.Append(',');
                        firstFrame = false;
                        sb.Append("{\"targets\":{");
                        bool firstId = true;
                        foreach (var idValue in L(step["gather"]))
                        {
                            long id = (long)D(idValue);
                            var got = world.Targets(id, pos[id.ToString()], D(step["now"]), h => pos[h], (a, b) => !blocked.Contains(a + ">" + b), (kind, h) => kind == "player" || kind == "zombie");
                            if (!firstId) sb.Append(',');
                            firstId = false;
                            sb.Append('"').Append(id).Append("\":[");
                            for (int i = 0; i < got.Count; i++)
                            {
                                if (i > 0) sb.Append(',');
                                sb.Append("{\"id\":").Append(got[i].Id).Append(",\"kind\":"); Json.Quote(sb, got[i].Kind);
                                sb.Append(",\"hostile\":").Append(got[i].Hostile ? "true" : "false").Append(",\"visible\":").Append(got[i].Visible ? "true" : "false").Append('}');
                            }
                            sb.Append(']');
                        }
                        sb.Append("},\"raycasts\":").Append(world.Raycasts - before).Append('}');
                    }
                }
                print(sb.Append(']').ToString());
                return 0;
            }
            case "many":
            {
                // Many copies of the second fixture tick, agents 0..n-1, in one TicksAsync.
                var template = Ticks(args[3])[1];
                int n = int.Parse(args[4]);
                var ticks = new List<Tick>();
                for (int i = 0; i < n; i++)
                    ticks.Add(new Tick { Snapshot = new Snapshot { Agent = i, TimeS = template.Snapshot.TimeS, SelfState = template.Snapshot.SelfState }, Profile = template.Profile });
                using (var client = new BrainClient(args[1], args[2], TokenForm.Bearer, TimeSpan.FromSeconds(60)))
                {
                    var results = client.TicksAsync(ticks).Result;
                    var sb = new StringBuilder("{\"agents\":[");
                    int replies = 0;
                    for (int i = 0; i < results.Count; i++) { if (i > 0) sb.Append(','); sb.Append(results[i].Agent); if (results[i] is Reply) replies++; }
                    print(sb.Append("],\"replies\":").Append(replies).Append('}').ToString());
                }
                return 0;
            }
            case "controlplane":
            {
                using (var cp = new ControlPlaneClient(args[1], args[2], args[3]))
                {
                    var first = cp.GetConfigAsync().Result;
                    var again = cp.GetConfigAsync(first.ETag).Result;
                    print("{\"version\":" + D(first.Bundle["version"]) + ",\"etag\":" + Q(first.ETag) + ",\"notModified\":" + (again.NotModified ? "true" : "false") + ",\"etag2\":" + Q(again.ETag) + "}");
                }
                return 0;
            }
            default:
                Console.Error.WriteLine("unknown command " + args[0]);
                return 2;
        }
    }

    static string Q(string s) { var sb = new StringBuilder(); Json.Quote(sb, s); return sb.ToString(); }
}
