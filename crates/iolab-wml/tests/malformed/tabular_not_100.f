# expect: 3:1 randtable percentages sum to 95, not 100
set $iosize = randvar(type=tabular, min=1k, randtable =
{{80, 1k, 4k},
 {15, 4k, 16k}})
