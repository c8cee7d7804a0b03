// What a C# mod (Unity, .NET server) costs per character per cadence, in process CPU time:
// gather the ticks, build the batch, send it to a real sidecar and apply the replies; beside
// a baseline of only encoding the same JSON. Process CPU counts every thread (HttpClient's,
// the GC's), so the full figure is an upper bound for the game thread's share.
// Usage: mono modbench.exe URL TOKEN CHARACTERS ROUNDS ; prints JSON.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Net.Http;
using System.Net.Http.Headers;
using Brainstem;

static class ModBench
{
    static int Main(string[] args)
    {
        string url = args[0].TrimEnd('/') + "/ticks", token = args[1];
        int n = int.Parse(args[2]), rounds = int.Parse(args[3]);
        var route = new List<Vec3> { new Vec3(1200, 8, 4400), new Vec3(1300, 8, 4400) };
        var intent = new Dictionary<long, string>();
        int round = 0;
        Func<List<Tick>> gather = () =>
        {
            var ticks = new List<Tick>(n);
            for (int i = 1; i <= n; i++)
            {
                double x = 1200 + i * 0.37, z = 4400 - i * 0.21;
                ticks.Add(new Tick
                {
                    Snapshot = new Snapshot
                    {
                        Agent = 8000 + i, TimeS = 100 + round * 0.5, Route = route, Squad = "bench",
                        SelfState = new SelfState { Pos = new Vec3(x, 8.25, z), HeadingDeg = (i * 17) % 360, Health = 100, Blood = 5000, Hunger = 20, Thirst = 20.5, HasWeapon = true, Ammo = 30 },
                        Targets = new List<Target>
                        {
                            new Target { Id = 100001, Kind = "player", Pos = new Vec3(x + 40.5, 8, z + 3.25), Hostile = true, Visible = false },
                            new Target { Id = 900000001 + i, Kind = "zombie", Pos = new Vec3(x - 12.75, 8, z), Hostile = true, Visible = i % 3 == 0 },
                        },
                    },
                    Profile = new Profile { Name = "bot", Role = "guard" },
                });
            }
            return ticks;
        };
        var http = new HttpClient { Timeout = TimeSpan.FromSeconds(60) };
        int failures = 0;
        Action step = () =>
        {
            round++;
            var ticks = gather();
            var agents = new List<long>(n);
            foreach (var t in ticks) agents.Add(t.Snapshot.Agent);
            var req = new HttpRequestMessage(HttpMethod.Post, url) { Content = new ByteArrayContent(Batch.Build(ticks)) };
            req.Content.Headers.ContentType = new MediaTypeHeaderValue("application/json");
            req.Headers.TryAddWithoutValidation("X-Brain-Token", token);
            var res = http.SendAsync(req).Result;
            string body = res.Content.ReadAsStringAsync().Result;
            if (!res.IsSuccessStatusCode) { failures++; return; }
            foreach (var r in Batch.ParseReplies(body, agents))
            {
                var reply = r as Reply;
                if (reply != null) intent[reply.Agent] = reply.Intents.Count > 0 ? reply.Intents[0].Kind : "";
                else failures++;
            }
        };
        for (int w = 0; w < 5; w++) step();
        var proc = Process.GetCurrentProcess();
        GC.Collect();
        var c0 = proc.TotalProcessorTime;
        for (int r = 0; r < rounds; r++) step();
        proc.Refresh();
        double full = (proc.TotalProcessorTime - c0).TotalMilliseconds * 1000;

        var g0 = proc.TotalProcessorTime;
        for (int r = 0; r < rounds; r++) gather();
        proc.Refresh();
        double gatherOnly = (proc.TotalProcessorTime - g0).TotalMilliseconds * 1000;

        var fixedTicks = gather();
        var e0 = proc.TotalProcessorTime;
        int bytes = 0;
        for (int r = 0; r < rounds; r++) bytes = Batch.Build(fixedTicks).Length;
        proc.Refresh();
        double encodeOnly = (proc.TotalProcessorTime - e0).TotalMilliseconds * 1000;

        // The replies alone: parse the last answer again, as many times.
        var agentsFixed = new List<long>(n);
        foreach (var t in fixedTicks) agentsFixed.Add(t.Snapshot.Agent);
        var lastReq = new HttpRequestMessage(HttpMethod.Post, url) { Content = new ByteArrayContent(Batch.Build(fixedTicks)) };
        lastReq.Content.Headers.ContentType = new MediaTypeHeaderValue("application/json");
        lastReq.Headers.TryAddWithoutValidation("X-Brain-Token", token);
        string replyBody = http.SendAsync(lastReq).Result.Content.ReadAsStringAsync().Result;
        var p0 = proc.TotalProcessorTime;
        for (int r = 0; r < rounds; r++) Batch.ParseReplies(replyBody, agentsFixed);
        proc.Refresh();
        double parseOnly = (proc.TotalProcessorTime - p0).TotalMilliseconds * 1000;

        double per = rounds * (double)n;
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
            "{{\"characters\":{0},\"rounds\":{1},\"full_us\":{2:F3},\"gather_us\":{3:F3},\"encode_us\":{4:F3},\"parse_us\":{8:F3},\"applied\":{5},\"failures\":{6},\"bytes\":{7}}}",
            n, rounds, full / per, gatherOnly / per, encodeOnly / per, intent.Count, failures, bytes, parseOnly / per));
        return 0;
    }
}
