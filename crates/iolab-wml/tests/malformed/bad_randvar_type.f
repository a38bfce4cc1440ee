# expect: 2:28 unknown randvar type `gaussian`
set $iosize = randvar(type=gaussian, min=1k, mean=8k)
