# expect: 3:1 `foreach` (filebench 1.4) is not supported
set $dir=/tmp
foreach $n in 1, 2, 3 {
  run 10
}
