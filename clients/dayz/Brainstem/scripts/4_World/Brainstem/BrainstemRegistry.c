// What each AI character perceives, without querying the world per character: the same rules
// as clients/lua/brainstem_perception.lua (held to the same fixture there).
//
// Players, AI and infected (and animals) are registered when they spawn and removed when they
// die or are deleted (BrainstemHooks.c). A character's targets are the registered entities
// within RADIUS metres, nearest first, at most MAX_TARGETS: a squared-distance test over the
// registry, never GetObjectsAtPosition3D. A server holds a thousand infected and animals, so
// each gathering frame sorts the registry into a grid of RADIUS-sized cells once, and a
// character looks only at the 3 x 3 cells around it. Whether a target is visible is a raycast, at most
// RAYCAST_BUDGET per frame over all characters; an answer is reused for LOS_TTL_S, and a pair
// the budget did not reach this frame keeps its last answer (never asked: not visible).

class BrainstemSight
{
	bool visible;
	float at;
}

class BrainstemRegistry
{
	// Metres within which a registered entity is a target.
	static const float RADIUS = 150;
	// Most line-of-sight raycasts per frame, over all characters together.
	static const int RAYCAST_BUDGET = 64;
	// Seconds a line-of-sight answer is reused before it is asked again.
	static const float LOS_TTL_S = 1.0;
	// Most targets in one character's tick (the nearest first).
	static const int MAX_TARGETS = 32;
	// Eye and chest heights, metres above the feet, for the line-of-sight ray.
	static const float EYE_HEIGHT = 1.6;
	static const float CHEST_HEIGHT = 1.0;

	protected static ref BrainstemRegistry s_Instance;

	protected ref array<int> m_Ids = new array<int>;
	protected ref array<string> m_Kinds = new array<string>;
	protected ref array<EntityAI> m_Entities = new array<EntityAI>;
	protected ref map<int, int> m_Index = new map<int, int>;
	// "from>to" -> the last line-of-sight answer for that pair.
	protected ref map<string, ref BrainstemSight> m_Los = new map<string, ref BrainstemSight>;
	protected int m_BudgetLeft;
	int raycasts;
	// This gathering frame's positions (by registry index) and cells of RADIUS metres:
	// cell key -> registry indices.
	protected ref array<vector> m_Pos = new array<vector>;
	protected ref map<int, ref array<int>> m_Cells = new map<int, ref array<int>>;
	// Cells per row of the cell key: far more than any map has, so every cell's key is unique.
	static const int CELL_ROW = 100000;

	static BrainstemRegistry Get()
	{
		if (!s_Instance)
			s_Instance = new BrainstemRegistry();
		return s_Instance;
	}

	int Count()
	{
		return m_Ids.Count();
	}

	// Registers an entity; a known id is updated in place.
	void Add(int id, string kind, EntityAI entity)
	{
		int i;
		if (m_Index.Find(id, i))
		{
			m_Kinds[i] = kind;
			m_Entities[i] = entity;
			return;
		}
		m_Index.Set(id, m_Ids.Count());
		m_Ids.Insert(id);
		m_Kinds.Insert(kind);
		m_Entities.Insert(entity);
	}

	// Forgets an entity (swap-remove) and every line-of-sight answer about it.
	void Remove(int id)
	{
		int i;
		if (!m_Index.Find(id, i))
			return;
		int last = m_Ids.Count() - 1;
		if (i != last)
		{
			m_Ids[i] = m_Ids[last];
			m_Kinds[i] = m_Kinds[last];
			m_Entities[i] = m_Entities[last];
			m_Index.Set(m_Ids[i], i);
		}
		m_Ids.Remove(last);
		m_Kinds.Remove(last);
		m_Entities.Remove(last);
		m_Index.Remove(id);
		string prefix = id.ToString() + ">";
		string suffix = ">" + id.ToString();
		array<string> stale = new array<string>;
		for (int k = 0; k < m_Los.Count(); k++)
		{
			string key = m_Los.GetKey(k);
			if (key.IndexOf(prefix) == 0 || (key.Length() >= suffix.Length() && key.Substring(key.Length() - suffix.Length(), suffix.Length()) == suffix))
				stale.Insert(key);
		}
		foreach (string s : stale)
			m_Los.Remove(s);
	}

	// The id an entity is registered under, or 0.
	int IdOf(EntityAI entity)
	{
		int i = m_Entities.Find(entity);
		if (i < 0)
			return 0;
		return m_Ids[i];
	}

	EntityAI EntityOf(int id)
	{
		int i;
		if (!m_Index.Find(id, i))
			return null;
		return m_Entities[i];
	}

	// Starts a frame that gathers: the raycast budget is full again, and every registered
	// entity's position is read once and filed in its cell.
	void BeginFrame()
	{
		m_BudgetLeft = RAYCAST_BUDGET;
		m_Pos.Clear();
		m_Cells.Clear();
		for (int i = 0; i < m_Ids.Count(); i++)
		{
			vector p = "0 0 0";
			if (m_Entities[i])
				p = m_Entities[i].GetPosition();
			m_Pos.Insert(p);
			int key = CellKey(p);
			array<int> cell = m_Cells.Get(key);
			if (!cell)
			{
				cell = new array<int>;
				m_Cells.Set(key, cell);
			}
			cell.Insert(i);
		}
	}

	static int CellKey(vector p)
	{
		int cx = Math.Floor(p[0] / RADIUS);
		int cz = Math.Floor(p[2] / RADIUS);
		return cx * CELL_ROW + cz;
	}

	// Kinds that are hostile to an AI character; the adapter may override per mod.
	bool Hostile(string kind, EntityAI entity)
	{
		return kind == "player" || kind == "zombie";
	}

	// Fills `targets` for character `selfId` standing at `self`'s position.
	// Call BeginFrame first in the frame.
	void Targets(int selfId, EntityAI self, float now, array<ref BrainTarget> targets)
	{
		vector me = self.GetPosition();
		float r2 = RADIUS * RADIUS;
		array<int> near = new array<int>;
		array<float> dist = new array<float>;
		int cx = Math.Floor(me[0] / RADIUS);
		int cz = Math.Floor(me[2] / RADIUS);
		for (int dx = -1; dx <= 1; dx++)
		{
			for (int dz = -1; dz <= 1; dz++)
			{
				array<int> cell = m_Cells.Get((cx + dx) * CELL_ROW + cz + dz);
				if (cell)
					Nearest(selfId, me, r2, cell, near, dist);
			}
		}
		foreach (int n : near)
		{
			BrainTarget t = new BrainTarget();
			t.id = m_Ids[n];
			t.kind = m_Kinds[n];
			t.pos = m_Pos[n];
			t.hostile = Hostile(t.kind, m_Entities[n]);
			t.visible = Visible(selfId, self, t.id, m_Entities[n], now);
			PlayerBase human = PlayerBase.Cast(m_Entities[n]);
			if (human)
				t.health = human.GetHealth("", "Health");
			targets.Insert(t);
		}
	}

	// Files the entities of one cell that are within the radius into the nearest-first list
	// (ties by id), kept at most MAX_TARGETS long.
	protected void Nearest(int selfId, vector me, float r2, array<int> cell, array<int> near, array<float> dist)
	{
		foreach (int i : cell)
		{
			if (i >= m_Ids.Count() || m_Ids[i] == selfId || !m_Entities[i])
				continue;
			float d2 = vector.DistanceSq(me, m_Pos[i]);
			if (d2 > r2)
				continue;
			// Insertion into the nearest-first list (ties by id), kept at most MAX_TARGETS long.
			int at = near.Count();
			while (at > 0 && (dist[at - 1] > d2 || (dist[at - 1] == d2 && m_Ids[near[at - 1]] > m_Ids[i])))
				at--;
			if (at >= MAX_TARGETS)
				continue;
			near.InsertAt(i, at);
			dist.InsertAt(d2, at);
			if (near.Count() > MAX_TARGETS)
			{
				near.Remove(MAX_TARGETS);
				dist.Remove(MAX_TARGETS);
			}
		}
	}

	protected bool Visible(int a, EntityAI from, int b, EntityAI to, float now)
	{
		string key = a.ToString() + ">" + b.ToString();
		BrainstemSight known = m_Los.Get(key);
		if (known && now - known.at < LOS_TTL_S)
			return known.visible;
		if (m_BudgetLeft <= 0)
			return known && known.visible;
		m_BudgetLeft--;
		raycasts++;
		bool v = Raycast(from, to);
		if (!known)
		{
			known = new BrainstemSight();
			m_Los.Set(key, known);
		}
		known.visible = v;
		known.at = now;
		return v;
	}

	// True when nothing blocks a ray from `from`'s eyes to `to`'s chest.
	static bool Raycast(EntityAI from, EntityAI to)
	{
		vector eye = from.GetPosition();
		eye[1] = eye[1] + EYE_HEIGHT;
		vector chest = to.GetPosition();
		chest[1] = chest[1] + CHEST_HEIGHT;
		vector contactPos;
		vector contactDir;
		int component;
		set<Object> hits = new set<Object>;
		if (!DayZPhysics.RaycastRV(eye, chest, contactPos, contactDir, component, hits, null, from, true, false, ObjIntersectView, 0.1))
			return true;
		return hits.Count() > 0 && hits.Get(0) == to;
	}
}

// Stable ids. An AI character's id comes from its spawn definition (characters.json), so it
// is the same after a restart and the sidecar's memory follows it. A player's comes from
// their Steam id (the same every session). Infected and animals have no persistence: a
// session counter, far above both ranges' starts, is enough for a target.
class BrainstemIds
{
	static const int PLAYER_BASE = 1073741824;   // 2^30: player ids are 2^30 .. 2^31-1
	static const int TRANSIENT_BASE = 900000000; // infected and animals, this session
	protected static int s_Next = TRANSIENT_BASE;

	static int ForPlayer(PlayerIdentity identity)
	{
		int h = identity.GetPlainId().Hash();
		if (h < 0)
			h = -(h + 1);
		return PLAYER_BASE + h % PLAYER_BASE;
	}

	static int Transient()
	{
		s_Next++;
		return s_Next;
	}
}
