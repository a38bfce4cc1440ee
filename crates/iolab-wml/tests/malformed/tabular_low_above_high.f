# expect: 4:2 low bound 8192 above its high bound 4096
set $iosize = randvar(type=tabular, min=1k, randtable =
{{60, 1k, 4k},
 {40, 8k, 4k}})
