// What a C# mod (Unity) costs the game's main thread per character per cadence, in CPU time of
// that one thread (CLOCK_THREAD_CPUTIME_ID), against a real sidecar.
//
// Counted ("game thread"): what Unity's main thread runs with the kit's UnityWebRequest
// transport. BrainLoop.Step (gather the ticks, build the batch, hand it to the transport) and
// the transport's completion callback (the body as text, read the replies, apply them). Not
// counted ("transport"): the HTTP exchange, which UnityWebRequest runs natively off the main
// thread; here HttpClient does it between the two, and the whole process's CPU over it (its
// threads, the GC) is reported on its own.
//
// Baselines of the same runtime: the client's encoder alone on the same ticks, and its reply
// reader alone on the same replies.
// Usage: mono modbench.exe URL TOKEN CHARACTERS ROUNDS ; prints JSON.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Runtime.InteropServices;
using System.Text;
using Brainstem;

static class Cpu
{
    struct Timespec { public long Sec, Nsec; }

    [DllImport("libc", EntryPoint = "clock_gettime")]
    static extern int ClockGettime(int clock, out Timespec ts);

    const int ProcessClock = 2, ThreadClock = 3;

    static double Read(int clock)
    {
        Timespec ts;
        if (ClockGettime(clock, out ts) != 0) throw new InvalidOperationException("clock_gettime failed");
        return ts.Sec + ts.Nsec * 1e-9;
    }

    /// <summary>CPU seconds of the calling thread.</summary>
    public static double Thread() { return Read(ThreadClock); }

    /// <summary>CPU seconds of the whole process, every thread.</summary>
    public static double Process() { return Read(ProcessClock); }
}

/// <summary>Holds each call as UnityWebRequest would take it; the bench does the exchange.</summary>
sealed class QueuedTransport : IBatchTransport
{
    public sealed class Call
    {
        public string Url;
        public byte[] Body;
        public IList<KeyValuePair<string, string>> Headers;
        public Action<int, string> Done;
    }

    public readonly Queue<Call> Calls = new Queue<Call>();

    public void Post(string url, byte[] body, IList<KeyValuePair<string, string>> headers, double timeoutS, Action<int, string> done)
    {
        Calls.Enqueue(new Call { Url = url, Body = body, Headers = headers, Done = done });
    }
}

static class ModBench
{
    static int Main(string[] args)
    {
        string url = args[0].TrimEnd('/'), token = args[1];
        int n = int.Parse(args[2]), rounds = int.Parse(args[3]);
        var route = new List<Vec3> { new Vec3(1200, 8, 4400), new Vec3(1300, 8, 4400) };
        var intent = new Dictionary<long, string>();
        int round = 0;
        Func<IList<Tick>> gather = () =>
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
        // The exchange: the body as bytes, as UnityWebRequest's download buffer holds it.
        Func<QueuedTransport.Call, KeyValuePair<int, byte[]>> exchange = call =>
        {
            var req = new HttpRequestMessage(HttpMethod.Post, call.Url) { Content = new ByteArrayContent(call.Body) };
            foreach (var h in call.Headers)
            {
                if (h.Key == "Content-Type") req.Content.Headers.ContentType = new MediaTypeHeaderValue(h.Value);
                else req.Headers.TryAddWithoutValidation(h.Key, h.Value);
            }
            using (var res = http.SendAsync(req).Result)
                return new KeyValuePair<int, byte[]>((int)res.StatusCode, res.Content.ReadAsByteArrayAsync().Result);
        };

        int failures = 0;
        var transport = new QueuedTransport();
        var loop = new BrainLoop(url, token, TokenForm.Header, transport,
            reply => intent[reply.Agent] = reply.Intents.Count > 0 ? reply.Intents[0].Kind : "",
            (agent, code, message) => failures++, 60, 0);
        double game = 0, exchangeCpu = 0;
        Action cadence = () =>
        {
            round++;
            double t0 = Cpu.Thread();
            loop.Step(round, gather);
            double t1 = Cpu.Thread();
            var call = transport.Calls.Dequeue();
            double p1 = Cpu.Process();
            var answer = exchange(call);
            double p2 = Cpu.Process();
            double t2 = Cpu.Thread();
            // downloadHandler.text: UTF-8 to a string on the main thread.
            call.Done(answer.Key, Encoding.UTF8.GetString(answer.Value));
            double t3 = Cpu.Thread();
            game += (t1 - t0) + (t3 - t2);
            exchangeCpu += p2 - p1;
        };
        for (int w = 0; w < 5; w++) cadence();
        game = 0;
        exchangeCpu = 0;
        GC.Collect();
        for (int r = 0; r < rounds; r++) cadence();

        Func<Action, double> timed = f =>
        {
            GC.Collect();
            double t = Cpu.Thread();
            for (int r = 0; r < rounds; r++) f();
            return Cpu.Thread() - t;
        };
        double gatherOnly = timed(() => gather());
        var fixedTicks = gather();
        int bytes = 0;
        double encodeOnly = timed(() => bytes = Batch.Build(fixedTicks).Length);

        // The replies alone: the last answer to these ticks, read again as many times.
        var agents = new List<long>(n);
        foreach (var t in fixedTicks) agents.Add(t.Snapshot.Agent);
        var headers = new List<KeyValuePair<string, string>> { new KeyValuePair<string, string>("Content-Type", "application/json"), new KeyValuePair<string, string>("X-Brain-Token", token) };
        string replyBody = Encoding.UTF8.GetString(exchange(new QueuedTransport.Call { Url = url + "/ticks", Body = Batch.Build(fixedTicks), Headers = headers }).Value);
        double parseOnly = timed(() => Batch.ParseReplies(replyBody, agents));

        double per = rounds * (double)n / 1e6;
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
            "{{\"characters\":{0},\"rounds\":{1},\"game_us\":{2:F3},\"transport_us\":{3:F3},\"gather_us\":{4:F3},\"encode_us\":{5:F3},\"parse_us\":{6:F3},\"applied\":{7},\"failures\":{8},\"bytes\":{9},\"reply_bytes\":{10}}}",
            n, rounds, game / per, exchangeCpu / per, gatherOnly / per, encodeOnly / per, parseOnly / per, intent.Count, failures, bytes, Encoding.UTF8.GetByteCount(replyBody)));
        return 0;
    }
}
