// A console try-out: three guards (agent ids 4201-4203) on one patrol route, one /ticks call
// per round at 2 Hz of game time; from round 3 a hostile player (4299) stands 12 m from guard
// 4203. Build it outside the repository (the .exe is yours, not the repository's):
//   mcs -r:System.Net.Http -out:/tmp/brainstem-example.exe Brainstem.cs Example.cs
//   mono /tmp/brainstem-example.exe http://127.0.0.1:8088 TOKEN [rounds] [timeout_s]
// In a game, BrainLoop.Step runs the same calls from Update without waiting (see README).
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
        var guards = new SortedDictionary<long, Vec3> { { 4201, new Vec3(1200, 8, 4400) }, { 4202, new Vec3(1210, 8, 4405) }, { 4203, new Vec3(1190, 8, 4395) } };

        using (var client = new BrainClient(url, token, TokenForm.Bearer, TimeSpan.FromSeconds(timeoutS)))
        {
            for (int round = 1; round <= rounds; round++)
            {
                double gameTime = 100 + (round - 1) * 0.5;
                var ticks = new List<Tick>();
                foreach (var g in guards)
                {
                    var targets = new List<Target>();
                    if (g.Key == 4203 && round >= 3)
                        targets.Add(new Target { Id = 4299, Kind = "player", Pos = new Vec3(g.Value.X + 12, 8, g.Value.Z), Hostile = true, Visible = true });
                    ticks.Add(new Tick
                    {
                        Snapshot = new Snapshot
                        {
                            Agent = g.Key, TimeS = gameTime, Route = route, Squad = "csharp-guards", Targets = targets,
                            SelfState = new SelfState { Pos = g.Value, HeadingDeg = 90, Health = 100, Blood = 5000, Hunger = 20, Thirst = 20, HasWeapon = true, Ammo = 30 },
                        },
                        Profile = new Profile { Name = "guard-" + g.Key, Role = "guard" },
                    });
                }
                try
                {
                    foreach (var result in client.TicksAsync(ticks).Result)
                    {
                        var reply = result as Reply;
                        if (reply == null) { var e = (TickError)result; Console.WriteLine("round " + round + " agent " + e.Agent + ": refused " + e.Code); continue; }
                        var kinds = new List<string>();
                        foreach (var intent in reply.Intents) kinds.Add(intent.Kind);
                        Console.WriteLine("round " + round + " agent " + reply.Agent + ": " + reply.Posture + " [" + string.Join(", ", kinds.ToArray()) + "]");
                    }
                }
                catch (AggregateException ex) when (ex.InnerException is BrainstemException)
                {
                    Console.WriteLine("round " + round + ": call failed: " + ex.InnerException.Message);
                    return 1;
                }
                Thread.Sleep(500);
            }
        }
        return 0;
    }
}
