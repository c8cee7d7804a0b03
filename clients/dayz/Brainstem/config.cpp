class CfgPatches
{
	class Brainstem
	{
		units[] = {};
		weapons[] = {};
		requiredVersion = 0.1;
		requiredAddons[] = {"DZ_Data", "DZ_Scripts"};
	};
};

class CfgMods
{
	class Brainstem
	{
		dir = "Brainstem";
		picture = "";
		action = "";
		hideName = 0;
		hidePicture = 1;
		name = "Brainstem";
		credits = "brainstem";
		author = "brainstem";
		version = "1.0.0";
		type = "mod";
		dependencies[] = {"Game", "World", "Mission"};
		class defs
		{
			// JSON, the tick and reply shapes and the HTTP client: engine types only.
			class gameScriptModule
			{
				value = "";
				files[] = {"Brainstem/scripts/3_Game"};
			};
			// The perception registry and the AI character: PlayerBase, ZombieBase, AnimalBase.
			class worldScriptModule
			{
				value = "";
				files[] = {"Brainstem/scripts/4_World"};
			};
			// MissionServer: spawns the characters and runs the client.
			class missionScriptModule
			{
				value = "";
				files[] = {"Brainstem/scripts/5_Mission"};
			};
		};
	};
};
