# expect: 5:48 unknown flowop target `waiterr`
# hint: did you mean `waiter`?
define process name=p {
  thread name=t1 { flowop block name=waiter }
  thread name=t2 { flowop wakeup name=w,target=waiterr }
}
