# expect: 4:5 `run` needs a run time of at least 1 s, found 0
# hint: a bare `run` runs 60 s
define process name=p { thread name=t { flowop hog name=h } }
run 0
