# Shared by bench/tpcc.sh and bench/ycsb.sh (source it; not a .sh, so that
# make bench leaves it out): builds PingCAP's go-tpc and go-ycsb from the Go
# module proxy into bench/.work/peers (git-ignored), with their own GOPATH
# and module cache there, never through the project's go.mod.
#
# go-tpc: `go install …/cmd/go-tpc@$GO_TPC_VERSION` (v1.0.7, the newest
# version the proxy lists; it speaks the MySQL protocol only: PostgreSQL
# support came later: the proxy refused the later tag v1.0.11 and a commit
# by its hash, and a pseudo-version needs the commit's time to the second).
# go-ycsb: v1.0.3's go.mod has a replace directive, so `go install …@v1.0.3`
# is refused; it is built from a small wrapper module that requires it and
# repeats that replace.

GO_TPC_VERSION=${GO_TPC_VERSION:-v1.0.7}
GO_YCSB_VERSION=${GO_YCSB_VERSION:-v1.0.3}
PEERS=${PEERS:-$PWD/bench/.work/peers}

# peer_go: run a go command with the peers' own GOPATH and module cache.
peer_go() {
  GOPATH=$PEERS/gopath GOMODCACHE=$PEERS/gopath/pkg/mod GOFLAGS=-modcacherw GOBIN=$PEERS/bin GOWORK=off go "$@"
}

# build_go_tpc: sets GOTPC to the binary of $GO_TPC_VERSION (built once).
build_go_tpc() {
  GOTPC=$PEERS/bin/go-tpc-$GO_TPC_VERSION
  [ -x "$GOTPC" ] && return
  mkdir -p "$PEERS/bin"
  (cd "$PEERS" && peer_go install "github.com/pingcap/go-tpc/cmd/go-tpc@$GO_TPC_VERSION") ||
    { echo "peers.bash: go install github.com/pingcap/go-tpc/cmd/go-tpc@$GO_TPC_VERSION failed (is that version served by the Go module proxy? go list -m -versions github.com/pingcap/go-tpc)" >&2; return 1; }
  mv "$PEERS/bin/go-tpc" "$GOTPC"
}

# go_tpc_has_postgres: whether $GOTPC has a PostgreSQL driver (its -d help
# names the drivers it has: v1.0.7 "mysql", later ones "mysql, postgres").
go_tpc_has_postgres() { "$GOTPC" --help 2>&1 | grep -q -- '--driver.*postgres'; }

# build_go_ycsb: sets GOYCSB to the binary of $GO_YCSB_VERSION (built once),
# through a wrapper module in $PEERS/ycsb-$GO_YCSB_VERSION.
build_go_ycsb() {
  GOYCSB=$PEERS/bin/go-ycsb-$GO_YCSB_VERSION
  [ -x "$GOYCSB" ] && return
  local mod=$PEERS/ycsb-$GO_YCSB_VERSION
  mkdir -p "$mod" "$PEERS/bin"
  cat >"$mod/go.mod" <<EOF
module qpslab.bench/goycsb

go 1.18

require github.com/pingcap/go-ycsb $GO_YCSB_VERSION

// go-ycsb's own go.mod has this replace, which only the main module's go.mod can carry.
replace github.com/apache/thrift => github.com/apache/thrift v0.0.0-20171203172758-327ebb6c2b6d
EOF
  (cd "$mod" && peer_go get "github.com/pingcap/go-ycsb/cmd/go-ycsb@$GO_YCSB_VERSION" &&
    peer_go build -o "$GOYCSB" github.com/pingcap/go-ycsb/cmd/go-ycsb) ||
    { echo "peers.bash: building go-ycsb $GO_YCSB_VERSION in $mod failed" >&2; return 1; }
}

# need FILE JQ-EXPR: the value of a field of qpslab's results file, or one
# line naming it and a non-zero exit where it is missing (null).
need() {
  local v
  v=$(jq -er "$2" "$1") || { echo "bench: $1 has no $2 (qpslab's results file changed shape?)" >&2; exit 1; }
  echo "$v"
}
