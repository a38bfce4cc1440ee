# expect: 3:57 `cvar-gamma` has no parameter `sigma`
# hint: `cvar-gamma` takes mean, gamma
set $size = cvar(type=cvar-gamma, parameters=mean:16384;sigma:2)
