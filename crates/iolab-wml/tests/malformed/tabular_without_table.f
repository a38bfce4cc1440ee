# expect: 2:15 a tabular randvar needs `randtable
set $iosize = randvar(type=tabular, min=1k)
