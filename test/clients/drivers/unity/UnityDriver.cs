// Runs the Unity package's director and characters in the UnityEngine stand-in: N guards with
// agent ids 4101.., an optional hostile player `metres` in front of the first, frames of
// 1/30 s for `seconds`, then prints a JSON report.
// Usage: mono unity.exe URL TOKEN|- N SECONDS [PLAYER_METRES]
using System;
using System.Globalization;
using System.Text;
using System.Threading;
using Brainstem;
using UnityEngine;

static class UnityDriver
{
    static int Main(string[] args)
    {
        string url = args[0], token = args[1] == "-" ? "" : args[1];
        int n = int.Parse(args[2]);
        double seconds = double.Parse(args[3], CultureInfo.InvariantCulture);
        var directorObject = new GameObject("director");
        directorObject.SetActive(false);
        var director = directorObject.AddComponent<BrainstemDirector>();
        director.url = url;
        director.token = token;
        directorObject.SetActive(true);
        var guards = new BrainstemCharacter[n];
        var home = new GameObject("home").transform;
        var post = new GameObject("post").transform;
        post.position = new Vector3(30, 0, 0);
        int engaged = 0;
        for (int i = 0; i < n; i++)
        {
            var body = new GameObject("guard" + i);
            body.transform.position = new Vector3(i * 0.5f, 0, 0);
            var c = body.AddComponent<BrainstemCharacter>();
            c.agentId = 4101 + i;
            c.route = new[] { home, post };
            c.Engage += (who, target, fire) => Interlocked.Increment(ref engaged);
            guards[i] = c;
        }
        if (args.Length > 4)
        {
            var p = new GameObject("player");
            p.transform.position = new Vector3(0, 0, float.Parse(args[4], CultureInfo.InvariantCulture));
            var me = p.AddComponent<BrainstemCharacter>();
            me.agentId = 4100;
            me.kind = "player";
        }
        var frames = (int)(seconds * 30);
        for (int f = 0; f < frames; f++)
        {
            Frame.Run(1f / 30);
            Thread.Sleep(5);
        }
        // Let the calls still out answer, then deliver them on a last frame.
        for (int w = 0; w < 400 && director.Applied + director.Failed + director.Stale < director.Sent; w++) { Thread.Sleep(10); Frame.Run(0); }
        // A few more frames: the characters act on the last replies.
        for (int f = 0; f < 15; f++) Frame.Run(1f / 30);
        int replied = 0;
        foreach (var g in guards) if (g.Posture != null) replied++;
        var sb = new StringBuilder("{\"sent\":").Append(director.Sent).Append(",\"applied\":").Append(director.Applied)
            .Append(",\"failed\":").Append(director.Failed).Append(",\"replied\":").Append(replied).Append(",\"engaged\":").Append(engaged)
            .Append(",\"doing\":\"").Append(guards[0].Doing).Append("\",\"moved\":").Append((guards[0].transform.position - new Vector3(0, 0, 0)).magnitude > 0.001f ? "true" : "false").Append(",\"logs\":[");
        for (int i = 0; i < Debug.Lines.Count; i++) { if (i > 0) sb.Append(','); Json.Quote(sb, Debug.Lines[i]); }
        Console.WriteLine(sb.Append("]}").ToString());
        return 0;
    }
}
