# bash completion for volley. It reads the subcommands and options from volley's own --help at
# completion time, so it never falls behind the command line.
_volley() {
  local cur prev words cword
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  local volley=${COMP_WORDS[0]}
  local sub="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) sub=${COMP_WORDS[i]}; break ;;
    esac
  done

  if [[ -z $sub ]]; then
    local subs
    subs=$("$volley" --help 2>/dev/null | awk 'tolower($0) ~ /^subcommands:/ {on = 1; next} on && !NF {exit} on {print $1}')
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    fi
    return
  fi

  case $prev in
    --json|--csv|--html|--latency-log)
      COMPREPLY=($(compgen -f -- "$cur"))
      return ;;
  esac
  if [[ $cur == -* ]]; then
    local opts
    opts=$("$volley" "$sub" --help 2>/dev/null | grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' |
           sed 's/^[ ,]*//' | sort -u)
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return
  fi
  case $sub in
    run|check|dump|sweep)
      COMPREPLY=($(compgen -f -X '!*.xml' -- "$cur") $(compgen -d -- "$cur")) ;;
    compare|merge)
      COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur")) ;;
  esac
}
complete -o filenames -F _volley volley
