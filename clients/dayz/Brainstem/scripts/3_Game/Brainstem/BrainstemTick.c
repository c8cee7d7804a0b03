// The perception of one AI character for one cadence, and the /ticks body built from many.
// Optional parts use an "absent" value that is never sent: an empty string, a negative
// health, a null list, -1 for a yes/no.

class BrainTarget
{
	int id;
	string kind;        // player | ai | zombie | animal
	vector pos;
	bool hostile;
	bool visible;       // in line of sight now
	string name;        // optional ("" = not sent)
	float health = -1;  // optional (negative = not sent)

	string ToJson()
	{
		string s = "{\"id\":" + BrainstemJson.Int(id) + ",\"kind\":" + BrainstemJson.Quote(kind) + ",\"pos\":" + BrainstemJson.Vec(pos);
		s += ",\"hostile\":" + BrainstemJson.Bool(hostile) + ",\"visible\":" + BrainstemJson.Bool(visible);
		if (name != "")
			s += ",\"name\":" + BrainstemJson.Quote(name);
		if (health >= 0)
			s += ",\"health\":" + BrainstemJson.Num(health);
		return s + "}";
	}
}

class BrainPoi
{
	string id;
	string kind;
	vector pos;

	string ToJson()
	{
		return "{\"id\":" + BrainstemJson.Quote(id) + ",\"kind\":" + BrainstemJson.Quote(kind) + ",\"pos\":" + BrainstemJson.Vec(pos) + "}";
	}
}

class BrainHeard
{
	int from;   // the speaker's id
	string text;
	float at_s;

	string ToJson()
	{
		return "{\"from\":" + BrainstemJson.Int(from) + ",\"text\":" + BrainstemJson.Quote(text) + ",\"at_s\":" + BrainstemJson.Num(at_s) + "}";
	}
}

class BrainTick
{
	// snapshot
	int agent;
	float time_s;
	vector pos;
	float heading_deg;  // 0 = +z (north), clockwise
	float health;       // 0..100
	float blood;        // 0..5000
	float hunger;       // 0..100
	float thirst;       // 0..100
	bool has_weapon;
	int ammo;
	ref array<ref BrainTarget> targets = new array<ref BrainTarget>;
	ref array<vector> route;            // optional waypoints (null = not sent)
	ref array<ref BrainPoi> poi;        // optional (null = not sent)
	ref array<ref BrainHeard> heard;    // optional (null = not sent)
	string squad;                       // optional ("" = not sent)
	// profile, every part optional
	string name;
	string role;                        // survivor | bandit | guard | trader
	int coward = -1;                    // -1 not sent, 0 false, 1 true
	ref map<string, float> traits;      // any subset of the trait names, 0..1 (null = not sent)

	string ToJson()
	{
		int i;
		string s = "{\"snapshot\":{\"agent\":" + BrainstemJson.Int(agent) + ",\"time_s\":" + BrainstemJson.Num(time_s);
		s += ",\"self_state\":{\"pos\":" + BrainstemJson.Vec(pos) + ",\"heading_deg\":" + BrainstemJson.Num(heading_deg);
		s += ",\"health\":" + BrainstemJson.Num(health) + ",\"blood\":" + BrainstemJson.Num(blood);
		s += ",\"hunger\":" + BrainstemJson.Num(hunger) + ",\"thirst\":" + BrainstemJson.Num(thirst);
		s += ",\"has_weapon\":" + BrainstemJson.Bool(has_weapon) + ",\"ammo\":" + BrainstemJson.Int(ammo) + "}";
		s += ",\"targets\":[";
		for (i = 0; i < targets.Count(); i++)
		{
			if (i > 0)
				s += ",";
			s += targets[i].ToJson();
		}
		s += "]";
		if (route)
		{
			s += ",\"route\":[";
			for (i = 0; i < route.Count(); i++)
			{
				if (i > 0)
					s += ",";
				s += BrainstemJson.Vec(route[i]);
			}
			s += "]";
		}
		if (poi)
		{
			s += ",\"poi\":[";
			for (i = 0; i < poi.Count(); i++)
			{
				if (i > 0)
					s += ",";
				s += poi[i].ToJson();
			}
			s += "]";
		}
		if (heard)
		{
			s += ",\"heard\":[";
			for (i = 0; i < heard.Count(); i++)
			{
				if (i > 0)
					s += ",";
				s += heard[i].ToJson();
			}
			s += "]";
		}
		if (squad != "")
			s += ",\"squad\":" + BrainstemJson.Quote(squad);
		return s + "},\"profile\":" + ProfileJson() + "}";
	}

	string ProfileJson()
	{
		string s = "";
		if (name != "")
			s += ",\"name\":" + BrainstemJson.Quote(name);
		if (role != "")
			s += ",\"role\":" + BrainstemJson.Quote(role);
		if (coward >= 0)
			s += ",\"coward\":" + BrainstemJson.Bool(coward == 1);
		if (traits)
		{
			string t = "";
			for (int i = 0; i < traits.Count(); i++)
			{
				if (i > 0)
					t += ",";
				t += BrainstemJson.Quote(traits.GetKey(i)) + ":" + BrainstemJson.Num(traits.GetElement(i));
			}
			s += ",\"traits\":{" + t + "}";
		}
		if (s == "")
			return "{}";
		return "{" + s.Substring(1, s.Length() - 1) + "}";
	}
}

class BrainstemBatch
{
	// The /ticks body: a JSON array of the ticks, in order.
	static string Build(array<ref BrainTick> ticks)
	{
		string s = "[";
		for (int i = 0; i < ticks.Count(); i++)
		{
			if (i > 0)
				s += ",";
			s += ticks[i].ToJson();
		}
		return s + "]";
	}
}
