// A console try-out: three characters on one patrol route, one /ticks call per step at 2 Hz
// through BrainLoop, as a Unity MonoBehaviour would call it from Update.
//   mcs -r:System.Net.Http -out:Example.exe Brainstem.cs Example.cs && mono Example.exe http://127.0.0.1:8088 TOKEN [rounds] [timeout_s]
using System;
using System.Collections.Generic;
using System.Threading;
using Brainstem;

static class Example
{
    static int Main(string[] args)
    {
        string url = args.Length > 0 ? args[0] : BrainClient.DefaultUrl;
        string token = args.Length > 1 ? args[1] : null;
        int rounds = args.Length > 2 ? int.Parse(args[2]) : 4;
        double timeoutS = args.Length > 3 ? double.Parse(args[3], System.Globalization.CultureInfo.InvariantCulture) : 2;
        var route = new List<Vec3> { new Vec3(1200, 8, 4400), new Vec3(1300, 8, 4400) };
        var positions = new Dictionary<long, Vec3> { { 1, new Vec3(1200, 8, 4400) }, { 2, new Vec3(1210, 8, 4405) }, { 3, new Vec3(1190, 8, 4395) } };

        using (var client = new BrainClient(url, token, TokenForm.Bearer, TimeSpan.FromSeconds(timeoutS)))
        {
            var loop = new BrainLoop(client,
                reply =>
                {
                    var kinds = new List<string>();
                    foreach (var intent in reply.Intents) kinds.Add(intent.Kind);
                    Console.WriteLine("agent " + reply.Agent + ": " + reply.Posture + " [" + string.Join(", ", kinds.ToArray()) + "]");
                },
                (agent, code, message) => Console.WriteLine((agent.HasValue ? "agent " + agent.Value : "call") + ": " + code + " " + message));
            var clock = System.Diagnostics.Stopwatch.StartNew();
            for (int round = 0; round < rounds; round++)
            {
                double now = clock.Elapsed.TotalSeconds;
                loop.Step(now, () =>
                {
                    var ticks = new List<Tick>();
                    foreach (var kv in positions)
                    {
                        ticks.Add(new Tick
                        {
                            Snapshot = new Snapshot
                            {
                                Agent = kv.Key, TimeS = 100 + now, Route = route, Squad = "alpha",
                                SelfState = new SelfState { Pos = kv.Value, HeadingDeg = 90, Health = 100, Blood = 5000, Hunger = 20, Thirst = 20, HasWeapon = true, Ammo = 30 },
                            },
                            Profile = new Profile { Name = "bot-" + kv.Key, Role = "guard" },
                        });
                    }
                    return ticks;
                });
                Thread.Sleep(500);
            }
            // Let the last batch answer (or time out) before exiting.
            while (loop.Applied + loop.Stale + loop.Failed < loop.Sent) Thread.Sleep(10);
            Console.WriteLine("sent " + loop.Sent + ", applied " + loop.Applied + ", stale " + loop.Stale + ", failed " + loop.Failed);
        }
        return 0;
    }
}
