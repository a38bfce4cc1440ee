# expect: 3:26 division by zero
set $nfiles = 100
set $perthread = $nfiles / 0
