# expect: 2:12 expected `=` after `$count`, found `5`
set $count 5
