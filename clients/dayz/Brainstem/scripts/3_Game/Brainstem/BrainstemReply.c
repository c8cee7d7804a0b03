// The /ticks reply, read with DayZ's JsonSerializer. Field names are the JSON names; a field
// an intent's kind does not carry keeps its default.

class BrainVec
{
	float x;
	float y;
	float z;

	vector ToVector()
	{
		return Vector(x, y, z);
	}
}

// One intent; which fields are meaningful depends on kind:
//   MoveTo {to, speed}  Engage {target, fire}  Say {text, channel, line_id}  Face {yaw_deg}
//   Flee {from}  Investigate {at}  Emote {name}  Idle {reason}  Logoff {}
// A kind the adapter does not know is ignored.
class BrainIntent
{
	string kind;
	ref BrainVec to;
	string speed;       // walk | jog | sprint
	int target;
	bool fire;
	string text;
	string channel;     // proximity | radio | global
	string line_id;
	float yaw_deg;
	int from;
	ref BrainVec at;
	string name;
	string reason;
}

class BrainReplyError
{
	string code;
	string message;
}

// A reply for one character: posture and intents (highest priority first), or an error for
// a tick the sidecar refused (then agent is the agent sent in that position).
class BrainReply
{
	int agent;
	string posture;     // standing | crouched | prone
	ref array<ref BrainIntent> intents;
	ref BrainReplyError error;
}

// A whole call's failure, as ?errors=body answers it: {"error": {"code", "message"}}.
class BrainErrorBody
{
	ref BrainReplyError error;
}

class BrainReplies
{
	ref array<ref BrainReply> replies;

	// Parses a /ticks reply body for a batch sent for `agents`, in order. False (with the
	// sidecar's error code or "bad_reply" in `code` and the reason in `why`) unless it is an
	// array of exactly one reply per agent.
	bool Parse(string body, array<int> agents, out string code, out string why)
	{
		JsonSerializer js = new JsonSerializer();
		code = "bad_reply";
		string trimmed = body.Trim();
		if (trimmed.Length() > 0 && trimmed.Get(0) == "{")
		{
			// ?errors=body: the whole call failed and the body says why.
			BrainErrorBody failure = new BrainErrorBody();
			if (js.ReadFromString(failure, trimmed, why) && failure.error)
			{
				code = failure.error.code;
				why = failure.error.message;
			}
			return false;
		}
		// JsonSerializer reads objects into classes, so the array is wrapped in one.
		if (!js.ReadFromString(this, "{\"replies\":" + body + "}", why))
			return false;
		if (!replies || replies.Count() != agents.Count())
		{
			why = "expected " + agents.Count().ToString() + " replies";
			return false;
		}
		for (int i = 0; i < replies.Count(); i++)
		{
			BrainReply r = replies[i];
			if (!r)
			{
				why = "reply " + i.ToString() + " is not an object";
				return false;
			}
			if (r.error)
				r.agent = agents[i];
			else if (!r.intents)
				r.intents = new array<ref BrainIntent>;
		}
		return true;
	}
}
