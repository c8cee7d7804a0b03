// Sends every AI character's tick in one POST /ticks call per cadence and hands the replies
// to an adapter. Runs on a Timer on the server thread; RestContext.POST never blocks it.
// A character keeps its last intents until a newer reply arrives; the reply to a batch older
// than the last one sent is dropped.

// What the modder fills in: perception in, intents out.
class BrainstemAdapter : Managed
{
	// Add one tick per AI character for this cadence (called only when a batch goes out).
	void Gather(array<ref BrainTick> ticks)
	{
	}

	// Apply a reply's posture and intents to its character (reply.agent).
	void Apply(BrainReply reply)
	{
	}

	// The sidecar refused this character's tick (a bug in Gather); the others were answered.
	void OnTickError(int agent, BrainReplyError error)
	{
		Print("[brainstem] tick for agent " + agent.ToString() + " refused: " + error.code + " " + error.message);
	}

	// A whole call failed (sidecar down, wrong token, timeout): characters keep their intents.
	// `code` is the sidecar's error code ("unauthorized", "payload_too_large", ...) or the
	// client's own ("network", "timeout", "bad_reply"); the default prints it with the fix.
	void OnCallFailed(string code, string reason)
	{
		Print("[brainstem] call failed: " + code + ": " + reason + BrainstemClient.Hint(code));
	}
}

class BrainstemCallback : RestCallback
{
	BrainstemClient m_Client;
	int m_Seq;

	void BrainstemCallback(BrainstemClient client, int seq)
	{
		m_Client = client;
		m_Seq = seq;
	}

	override void OnSuccess(string data, int dataSize)
	{
		m_Client.OnAnswer(m_Seq, data);
	}

	override void OnError(int errorCode)
	{
		// RestApi gives only an ERestResultState here, never the status or the body: with
		// ?errors=body the sidecar answers its own failures as 200s, so this is the network.
		m_Client.OnFailure(m_Seq, "network", "RestApi error state " + errorCode.ToString() + " (no sidecar at the URL?)");
	}

	override void OnTimeout()
	{
		m_Client.OnFailure(m_Seq, "timeout", "no answer within RestApi's timeout");
	}
}

class BrainstemCall
{
	ref BrainstemCallback callback;
	ref array<int> agents;
	float sentAt;
}

class BrainstemClient : Managed
{
	// Most ticks the sidecar takes in one call.
	static const int MAX_BATCH = 1024;
	// Seconds between batches by default (2 Hz); 0.1 to 0.5 s (10 to 2 Hz) is the useful range.
	static const float DEFAULT_CADENCE_S = 0.5;
	// Seconds without a reply after which the next step sends a fresh batch anyway.
	static const float LATE_AFTER_S = 1.0;
	// Seconds after which a call with no callback at all is forgotten (above RestApi's
	// default 10 s timeout, so normally RestApi reports first).
	static const float FORGET_AFTER_S = 15.0;
	// Most calls out at once; a step beyond this sends nothing.
	static const int MAX_OUTSTANDING = 4;

	protected ref BrainstemAdapter m_Adapter;
	protected RestContext m_Context;
	protected string m_Request;
	protected float m_CadenceS;
	protected ref Timer m_Timer;
	protected ref map<int, ref BrainstemCall> m_Pending = new map<int, ref BrainstemCall>;
	protected ref map<int, ref BrainReply> m_Last = new map<int, ref BrainReply>;
	protected int m_Seq;

	int sent;
	int applied;
	int stale;
	int failed;
	int skipped;

	// What a failure code means to a server owner: appended to the default log line.
	static string Hint(string code)
	{
		if (code == "unauthorized")
			return " (the token is wrong or missing: use the brain token that `brainstem up` prints)";
		if (code == "network")
			return " (is `brainstem up` running, and the URL right?)";
		if (code == "payload_too_large")
			return " (too many characters in one batch)";
		return "";
	}

	// baseUrl like "http://127.0.0.1:8088/"; the token travels in the query (RestContext
	// cannot set an Authorization header), with errors=body so that a refusal (a wrong token,
	// a full queue) arrives as a 200 whose body says which: RestCallback.OnError only gets a
	// result state.
	void BrainstemClient(string baseUrl, string token, BrainstemAdapter adapter, float cadenceS = DEFAULT_CADENCE_S)
	{
		m_Adapter = adapter;
		m_CadenceS = cadenceS;
		m_Request = "ticks?errors=body";
		if (token == "")
			Print("[brainstem] no token set: the sidecar will refuse every call (unauthorized); use the brain token that `brainstem up` prints");
		else
			m_Request = m_Request + "&token=" + BrainstemJson.UrlEncode(token);
		RestApi api = GetRestApi();
		if (!api)
			api = CreateRestApi();
		m_Context = api.GetRestContext(baseUrl);
		m_Context.SetHeader("application/json");
	}

	void Start()
	{
		if (!m_Timer)
			m_Timer = new Timer(CALL_CATEGORY_SYSTEM);
		m_Timer.Run(m_CadenceS, this, "Step", null, true);
	}

	void Stop()
	{
		if (m_Timer)
			m_Timer.Stop();
	}

	// The last reply applied for a character (its current intents), or null.
	BrainReply Last(int agent)
	{
		return m_Last.Get(agent);
	}

	// Forgets a character that left the game.
	void Forget(int agent)
	{
		m_Last.Remove(agent);
	}

	void Step()
	{
		float now = GetGame().GetTickTime();
		ForgetSilentCalls(now);
		BrainstemCall last = m_Pending.Get(m_Seq);
		if ((last && now - last.sentAt < LATE_AFTER_S) || m_Pending.Count() >= MAX_OUTSTANDING)
		{
			skipped++;
			return;
		}
		array<ref BrainTick> ticks = new array<ref BrainTick>;
		m_Adapter.Gather(ticks);
		if (ticks.Count() == 0)
			return;
		if (ticks.Count() > MAX_BATCH)
		{
			m_Adapter.OnCallFailed("too_many_ticks", "at most " + MAX_BATCH.ToString() + " ticks per batch, got " + ticks.Count().ToString());
			return;
		}
		BrainstemCall call = new BrainstemCall();
		call.agents = new array<int>;
		for (int i = 0; i < ticks.Count(); i++)
			call.agents.Insert(ticks[i].agent);
		call.sentAt = now;
		m_Seq++;
		call.callback = new BrainstemCallback(this, m_Seq);
		m_Pending.Set(m_Seq, call);
		sent++;
		m_Context.POST(call.callback, m_Request, BrainstemBatch.Build(ticks));
	}

	protected void ForgetSilentCalls(float now)
	{
		array<int> old = new array<int>;
		for (int i = 0; i < m_Pending.Count(); i++)
		{
			if (now - m_Pending.GetElement(i).sentAt >= FORGET_AFTER_S)
				old.Insert(m_Pending.GetKey(i));
		}
		foreach (int seq : old)
		{
			m_Pending.Remove(seq);
			failed++;
			m_Adapter.OnCallFailed("timeout", "no answer within " + FORGET_AFTER_S.ToString() + " s");
		}
	}

	void OnAnswer(int seq, string data)
	{
		BrainstemCall call = m_Pending.Get(seq);
		if (!call)
			return;
		m_Pending.Remove(seq);
		if (seq != m_Seq)
		{
			stale++;
			return;
		}
		BrainReplies replies = new BrainReplies();
		string code;
		string why;
		if (!replies.Parse(data, call.agents, code, why))
		{
			failed++;
			m_Adapter.OnCallFailed(code, why);
			return;
		}
		applied++;
		foreach (BrainReply r : replies.replies)
		{
			if (r.error)
			{
				m_Adapter.OnTickError(r.agent, r.error);
				continue;
			}
			m_Last.Set(r.agent, r);
			m_Adapter.Apply(r);
		}
	}

	void OnFailure(int seq, string code, string reason)
	{
		if (!m_Pending.Get(seq))
			return;
		m_Pending.Remove(seq);
		failed++;
		if (seq == m_Seq)
			m_Adapter.OnCallFailed(code, reason);
	}
}
