# expect: 5:10 unknown flowop `loop`
# hint: cannot use itself
define flowop name=loop
{
  flowop loop name=l1
}
