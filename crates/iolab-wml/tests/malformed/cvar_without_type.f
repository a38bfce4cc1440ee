# expect: 2:13 `cvar(…)` needs `type=cvar-…`
set $size = cvar(parameters=mean:16384)
