# expect: 3:18 unknown variable `$nfiles`
# hint: first set at 4:5
set $perthread = $nfiles / 4
set $nfiles = 100
define process name=p { thread name=t { flowop hog name=h } }
run 1
