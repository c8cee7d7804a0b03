// The brainstem client's batches over Unity's own HTTP: UnityWebRequest runs the request off
// the main thread and raises `completed` on the main thread, so replies are applied there.
using System;
using System.Collections.Generic;
using UnityEngine.Networking;

namespace Brainstem
{
    public sealed class UnityWebRequestTransport : IBatchTransport
    {
        public void Post(string url, byte[] body, IList<KeyValuePair<string, string>> headers, double timeoutS, Action<int, string> done)
        {
            var request = new UnityWebRequest(url, UnityWebRequest.kHttpVerbPOST)
            {
                uploadHandler = new UploadHandlerRaw(body),
                downloadHandler = new DownloadHandlerBuffer(),
                timeout = Math.Max(1, (int)Math.Ceiling(timeoutS)),
            };
            foreach (var h in headers) request.SetRequestHeader(h.Key, h.Value);
            request.SendWebRequest().completed += _ =>
            {
                try
                {
                    // A status is an answer (4xx/5xx included: their body says why); no status is the network.
                    if (request.responseCode > 0) done((int)request.responseCode, request.downloadHandler.text);
                    else done(0, request.error ?? "network");
                }
                finally
                {
                    request.Dispose();
                }
            };
        }
    }
}
