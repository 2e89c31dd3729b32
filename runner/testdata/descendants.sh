#!/bin/sh
# descendants.sh PIDFILE exit|hang: an agent that leaves 23 descendants
# behind, every way a process can try to outlive its agent, and writes each
# pid (its own too: 24 lines) to PIDFILE, then touches PIDFILE.ready. With
# exit it then exits 0; with hang it waits (sleep 7777) for its timeout or
# a stop. Every descendant ends in `sleep 7777`, so a pid found alive can be
# told from a reused one by its command line.
#   - in its process group: a sleep; a chain of 3 shells; a shell ignoring
#     SIGTERM with its child; two grandchildren whose parent exits at once
#     (reparented to orch, the subreaper);
#   - escaped with setsid, still carrying ORCH_ATTEMPT_TOKEN: a chain of 3,
#     and a chain of 2 started by a subshell that exits (a double fork);
#   - escaped with setsid env -i (no ORCH_* variable at all): three
#     grandchildren whose parent exits at once, a tree of 5 (a shell with a
#     chain of 2 and two grandchildren whose parent exits), and a shell
#     ignoring SIGTERM with its child.
# The roles below are the script calling itself.
me=$0 f=$1 role=$2
case $role in
sleeper)
	echo $$ >>"$f"
	exec sleep 7777 ;;
chain) # chain N: N processes, each the parent of the next
	echo $$ >>"$f"
	if [ "$3" -gt 1 ]; then
		sh "$me" "$f" chain $(($3 - 1)) &
		wait
	fi
	exec sleep 7777 ;;
orphaner) # orphaner N: starts N sleepers and exits at once
	i=0
	while [ $i -lt "$3" ]; do
		sh "$me" "$f" sleeper &
		i=$((i + 1))
	done
	exit 0 ;;
stubborn)
	trap '' TERM
	echo $$ >>"$f"
	sleep 7777 &
	echo $! >>"$f"
	wait ;;
tree)
	echo $$ >>"$f"
	sh "$me" "$f" chain 2 &
	sh "$me" "$f" orphaner 2 &
	wait ;;
exit | hang)
	echo $$ >>"$f"
	sleep 7777 &
	echo $! >>"$f"
	sh "$me" "$f" chain 3 &
	sh "$me" "$f" stubborn &
	sh "$me" "$f" orphaner 2 &
	setsid sh "$me" "$f" chain 3 &
	(setsid sh "$me" "$f" chain 2 &)
	setsid env -i /bin/sh "$me" "$f" orphaner 3 &
	setsid env -i /bin/sh "$me" "$f" tree &
	setsid env -i /bin/sh "$me" "$f" stubborn &
	while [ "$(wc -l <"$f")" -lt 24 ]; do sleep 0.05; done
	touch "$f.ready"
	if [ "$role" = hang ]; then exec sleep 7777; fi
	exit 0 ;;
esac
