# expect: 3:23 unknown cvar type `cvar-gauss`
# hint: did you mean `cvar-gamma`?
set $size = cvar(type=cvar-gauss, parameters=mean:1;sigma:2)
