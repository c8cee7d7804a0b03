// What a C# mod (Unity) costs the game's main thread per character per cadence, in CPU time of
// that one thread (CLOCK_THREAD_CPUTIME_ID), against a real sidecar.
//
// Counted ("game thread"): what Unity's main thread runs with the kit's UnityWebRequest
// transport. BrainLoop.Step (gather the ticks, build the batch, hand it to the transport) and
// the transport's completion callback (the body as text, read the replies, apply them). Not
// counted ("transport"): the HTTP exchange, which UnityWebRequest runs natively off the main
// thread; here a keep-alive socket does it between the two, receiving into a buffer kept
// between calls (so it leaves no garbage for the main thread's collections, as native code
// leaves none), and its CPU is reported on its own.
//
// Baselines of the same runtime: the client's encoder alone on the same ticks, and its reply
// reader alone on the same replies.
// Usage: mono modbench.exe URL TOKEN CHARACTERS ROUNDS ; prints JSON.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net.Sockets;
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

/// <summary>
/// The HTTP exchange as UnityWebRequest does it natively: one keep-alive connection, the answer
/// received into a buffer kept between calls, so the managed heap (and the main thread's
/// garbage collections) carry nothing of it but the text the game asks for.
/// </summary>
sealed class Exchange
{
    readonly Socket socket;
    readonly string host;
    byte[] buf = new byte[1 << 16];
    int bodyStart, bodyLength;

    public Exchange(string url)
    {
        var uri = new Uri(url);
        host = uri.Host + ":" + uri.Port;
        socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        socket.Connect(uri.Host, uri.Port);
    }

    public int Post(QueuedTransport.Call call)
    {
        var head = new StringBuilder("POST ").Append(new Uri(call.Url).PathAndQuery).Append(" HTTP/1.1\r\nHost: ").Append(host)
            .Append("\r\nContent-Length: ").Append(call.Body.Length).Append("\r\n");
        foreach (var h in call.Headers) head.Append(h.Key).Append(": ").Append(h.Value).Append("\r\n");
        socket.Send(Encoding.ASCII.GetBytes(head.Append("\r\n").ToString()));
        socket.Send(call.Body);
        int have = 0, end = -1;
        while (end < 0)
        {
            have += Receive(have);
            for (int i = 3; i < have; i++) if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r') { end = i + 1; break; }
        }
        string headers = Encoding.ASCII.GetString(buf, 0, end);
        int status = int.Parse(headers.Substring(9, 3), CultureInfo.InvariantCulture);
        int at = headers.IndexOf("\r\ncontent-length:", StringComparison.OrdinalIgnoreCase);
        if (at < 0) throw new InvalidOperationException("bench: the sidecar answered without a Content-Length");
        int from = at + 17, to = headers.IndexOf('\r', from);
        bodyLength = int.Parse(headers.Substring(from, to - from).Trim(), CultureInfo.InvariantCulture);
        bodyStart = end;
        if (buf.Length < end + bodyLength) Array.Resize(ref buf, end + bodyLength);
        while (have < end + bodyLength) have += Receive(have);
        return status;
    }

    int Receive(int at)
    {
        if (at == buf.Length) Array.Resize(ref buf, buf.Length * 2);
        int got = socket.Receive(buf, at, buf.Length - at, SocketFlags.None);
        if (got == 0) throw new InvalidOperationException("bench: the sidecar closed the connection");
        return got;
    }

    /// <summary>The last answer's body as text.</summary>
    public string Text() { return Encoding.UTF8.GetString(buf, bodyStart, bodyLength); }
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

        var exchange = new Exchange(url);
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
            int status = exchange.Post(call);
            double p2 = Cpu.Process();
            double t2 = Cpu.Thread();
            // downloadHandler.text: the received bytes to a string on the main thread.
            call.Done(status, exchange.Text());
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
        exchange.Post(new QueuedTransport.Call { Url = url + "/ticks", Body = Batch.Build(fixedTicks), Headers = headers });
        string replyBody = exchange.Text();
        double parseOnly = timed(() => Batch.ParseReplies(replyBody, agents));

        double per = rounds * (double)n / 1e6;
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
            "{{\"characters\":{0},\"rounds\":{1},\"game_us\":{2:F3},\"transport_us\":{3:F3},\"gather_us\":{4:F3},\"encode_us\":{5:F3},\"parse_us\":{6:F3},\"applied\":{7},\"failures\":{8},\"bytes\":{9},\"reply_bytes\":{10}}}",
            n, rounds, game / per, exchangeCpu / per, gatherOnly / per, encodeOnly / per, parseOnly / per, intent.Count, failures, bytes, Encoding.UTF8.GetByteCount(replyBody)));
        return 0;
    }
}
