# bash completion for roceswitch-ctl (tools/roceswitch-ctl). Source it, or install it as
# /usr/share/bash-completion/completions/roceswitch-ctl. Port and group names come from the
# running switch (port list --names, group list --names, 2 s at most); nothing when it does not answer.

# _roceswitch_ctl_names port|group: names from the switch on the socket the command line names.
_roceswitch_ctl_names() {
    local i w sock=()
    for ((i = 1; i < ${#words[@]}; i++)); do
        w="${words[i]}"
        case "$w" in
            --socket) sock=(--socket "${words[i + 1]}") ;;
            --socket=*) sock=("$w") ;;
        esac
    done
    "${words[0]}" "${sock[@]}" --timeout 2 "$1" list --names 2>/dev/null
}

_roceswitch_ctl() {
    local cur prev words cword
    if declare -F _get_comp_words_by_ref >/dev/null; then
        _get_comp_words_by_ref -n := cur prev words cword   # names like route:10.0.0.0/24 stay whole
    else
        cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD - 1]}"
        words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
    fi
    COMPREPLY=()

    case "$prev" in
        --socket) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
        --policy) mapfile -t COMPREPLY < <(compgen -W "ecmp flowlet_random flowlet_quality per_packet_quality spray drill least_queue" -- "$cur"); return ;;
        --members)
            mapfile -t COMPREPLY < <(compgen -S = -W "$(_roceswitch_ctl_names port)" -- "$cur")
            compopt -o nospace 2>/dev/null
            return ;;
        --rx | --tx) mapfile -t COMPREPLY < <(compgen -W "$(_roceswitch_ctl_names port)" -- "$cur"); return ;;
        --icmp-unreachable | --lldp) mapfile -t COMPREPLY < <(compgen -W "on off" -- "$cur"); return ;;
        --timeout | --limit | --param | --table-size | --policy-by-tc | --interval | --count | --truncate | --queue | --ipv4 | --ipv6 | --vlan-access | --vlan-tagged) return ;;
    esac

    # The positional words so far: the command, its subcommand, their arguments.
    local pos=() i w
    for ((i = 1; i < cword; i++)); do
        w="${words[i]}"
        case "$w" in
            --socket | --timeout | --limit | --members | --policy | --param | --table-size | --policy-by-tc | --interval | --count | \
                --rx | --tx | --truncate | --queue | --speed | --mac | --cable-length | --limit-packets | --limit-bytes | --scheduler | \
                --weights | --ipv4 | --ipv6 | --icmp-unreachable | --lldp | --vlan-access | --vlan-tagged) ((i++)) ;;
            -*) ;;
            *) pos+=("$w") ;;
        esac
    done

    local list="" opts="-h --help --socket --timeout"
    case "${pos[0]:-}" in
        "") list="route group port mirror buffer system qos counters neighbours lldp fdb config state limits ops batch p4 trace capture raw watch" ;;
        route)
            case "${pos[1]:-}" in
                "") list="add del list" ;;
                add) opts+=" --replace"; case ${#pos[@]} in 3) list="group nexthops drop" ;; 4) [ "${pos[3]}" = group ] && list="$(_roceswitch_ctl_names group)" ;; esac ;;
                list) opts+=" --limit --json" ;;
            esac ;;
        group)
            case "${pos[1]:-}" in
                "") list="add set del list" ;;
                add | set) opts+=" --members --policy --param --table-size --policy-by-tc"
                    [ "${pos[1]}" = set ] && [ ${#pos[@]} -eq 2 ] && list="$(_roceswitch_ctl_names group)" ;;
                del) [ ${#pos[@]} -eq 2 ] && list="$(_roceswitch_ctl_names group)" ;;
                list) opts+=" --names --json"; [ ${#pos[@]} -eq 2 ] && list="$(_roceswitch_ctl_names group)" ;;
            esac ;;
        port)
            case "${pos[1]:-}" in
                "") list="up down set list" ;;
                up | down) [ ${#pos[@]} -eq 2 ] && list="$(_roceswitch_ctl_names port)" ;;
                set) opts+=" --speed --mac --cable-length --limit-packets --limit-bytes --scheduler --weights --ipv4 --ipv6"
                    opts+=" --icmp-unreachable --lldp --vlan-access --vlan-tagged"
                    [ ${#pos[@]} -eq 2 ] && list="$(_roceswitch_ctl_names port)" ;;
                list) opts+=" --names --json" ;;
            esac ;;
        mirror)
            case "${pos[1]:-}" in
                "") list="set del list" ;;
                set) opts+=" --rx --tx --truncate --queue"; [ ${#pos[@]} -eq 3 ] && list="$(_roceswitch_ctl_names port)" ;;
                list) opts+=" --json" ;;
            esac ;;
        buffer | system)
            case "${pos[1]:-}" in
                "") list="get set" ;;
                get) opts+=" --json"; [ ${#pos[@]} -eq 2 ] && { mapfile -t COMPREPLY < <(compgen -f -- "$cur"); } ;;
                set) [ ${#pos[@]} -eq 2 ] && { mapfile -t COMPREPLY < <(compgen -f -- "$cur"); } ;;
            esac ;;
        counters)
            opts+=" --json"
            [ ${#pos[@]} -eq 1 ] && list="$(_roceswitch_ctl_names port) $(_roceswitch_ctl_names group)" ;;
        config)
            case "${pos[1]:-}" in
                "") list="dump" ;;
                dump) opts+=" --json"; [ ${#pos[@]} -eq 2 ] && { mapfile -t COMPREPLY < <(compgen -f -- "$cur"); } ;;
            esac ;;
        state) [ ${#pos[@]} -eq 1 ] && list="hash"; opts+=" --json" ;;
        limits | ops) opts+=" --json" ;;
        batch) [ ${#pos[@]} -eq 1 ] && { mapfile -t COMPREPLY < <(compgen -f -- "$cur"); } ;;
        watch) opts+=" --interval --count" ;;
    esac

    if [[ "$cur" == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
    elif [ -n "$list" ]; then
        mapfile -t COMPREPLY < <(compgen -W "$list" -- "$cur")
    fi
    if declare -F __ltrim_colon_completions >/dev/null; then
        __ltrim_colon_completions "$cur"
    fi
    return 0
}

complete -F _roceswitch_ctl roceswitch-ctl
