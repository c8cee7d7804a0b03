-- brainstem: AI characters driven by the brainstem brain sidecar (server side only).
fx_version 'cerulean'
game 'gta5'
lua54 'yes'

name 'brainstem'
description 'Peds that patrol, react, fight and talk, decided by the brainstem brain sidecar'
version '1.0.0'

-- Loaded by server.lua with LoadResourceFile, so they set no globals.
files { 'brainstem.lua', 'brainstem_perception.lua' }

server_scripts { 'server.lua' }
