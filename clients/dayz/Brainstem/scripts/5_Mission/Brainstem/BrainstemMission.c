// Wires brainstem into the server mission: reads the settings and the characters' spawn
// definitions from the server profile, spawns the characters, registers players, sends one
// POST /ticks per cadence and drives every character each frame.
//
// $profile:Brainstem/settings.json   {"url": "http://127.0.0.1:8088/", "token": "...", "cadence_s": 0.5}
// $profile:Brainstem/characters.json [{"id": 7101, "name": "Rosa", "role": "guard", "pos": [...], "route": [[...], [...]]}, ...]
// Each character's id is its agent id: keep it when you edit the list and the sidecar's
// memory of that character follows it across restarts.

class BrainstemSettings
{
	string url = "http://127.0.0.1:8088/";
	string token = "";
	float cadence_s = 0.5;
}

class BrainstemCharacters
{
	ref array<ref BrainstemSpawn> characters;
}

class BrainstemMissionAdapter : BrainstemAdapter
{
	ref map<int, ref BrainstemCharacter> m_Characters = new map<int, ref BrainstemCharacter>;

	override void Gather(array<ref BrainTick> ticks)
	{
		float now = GetGame().GetTickTime();
		BrainstemRegistry.Get().BeginFrame();
		foreach (int id, BrainstemCharacter c : m_Characters)
		{
			if (c.IsAlive())
				ticks.Insert(c.Tick(now));
		}
	}

	override void Apply(BrainReply reply)
	{
		BrainstemCharacter c = m_Characters.Get(reply.agent);
		if (c)
			c.SetReply(reply);
	}

	void Drive()
	{
		float now = GetGame().GetTickTime();
		foreach (int id, BrainstemCharacter c : m_Characters)
			c.Drive(now);
	}
}

modded class MissionServer
{
	static const string BRAINSTEM_DIR = "$profile:Brainstem";
	ref BrainstemClient m_Brainstem;
	ref BrainstemMissionAdapter m_BrainstemAdapter;

	override void OnInit()
	{
		super.OnInit();
		BrainstemSettings settings = new BrainstemSettings();
		if (FileExist(BRAINSTEM_DIR + "/settings.json"))
			JsonFileLoader<BrainstemSettings>.JsonLoadFile(BRAINSTEM_DIR + "/settings.json", settings);
		BrainstemCharacters list = new BrainstemCharacters();
		if (FileExist(BRAINSTEM_DIR + "/characters.json"))
			JsonFileLoader<BrainstemCharacters>.JsonLoadFile(BRAINSTEM_DIR + "/characters.json", list);
		if (!list.characters)
		{
			Print("[brainstem] no " + BRAINSTEM_DIR + "/characters.json: no characters spawned");
			return;
		}
		m_BrainstemAdapter = new BrainstemMissionAdapter();
		foreach (BrainstemSpawn s : list.characters)
		{
			BrainstemCharacter c = new BrainstemCharacter(s);
			c.Spawn();
			m_BrainstemAdapter.m_Characters.Set(s.id, c);
		}
		Print("[brainstem] " + list.characters.Count().ToString() + " characters, sidecar " + settings.url);
		m_Brainstem = new BrainstemClient(settings.url, settings.token, m_BrainstemAdapter, settings.cadence_s);
		m_Brainstem.Start();
	}

	override void InvokeOnConnect(PlayerBase player, PlayerIdentity identity)
	{
		super.InvokeOnConnect(player, identity);
		if (player && identity)
			player.BrainstemRegister(BrainstemIds.ForPlayer(identity), "player");
	}

	override void OnUpdate(float timeslice)
	{
		super.OnUpdate(timeslice);
		if (m_BrainstemAdapter)
			m_BrainstemAdapter.Drive();
	}
}
