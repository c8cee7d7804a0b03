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
		name = "Brainstem";
		type = "mod";
		dependencies[] = {"Mission"};
		class defs
		{
			class missionScriptModule
			{
				value = "";
				files[] = {"Brainstem/scripts/5_Mission"};
			};
		};
	};
};
