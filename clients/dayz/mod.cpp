// The @Brainstem mod folder's launcher entry (goes in @Brainstem/, beside addons/).
name = "Brainstem";
author = "brainstem";
tooltip = "AI characters whose decisions come from the brainstem brain sidecar";
overview = "Server-side mod: AI characters that patrol, react, fight and talk, decided by the brainstem sidecar beside the server.";
version = "1.0.0";
