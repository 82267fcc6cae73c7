# Sourced by Tests/perf/callgrind.sh and Tests/perf/footprint.sh:
# measured_library BIN DIR puts the release librestoration.so of BIN into
# DIR (created), without its debug info, with the librestoration.so.1 link a
# program's loader asks for. valgrind 3.19 gives up on the DWARF 5 debug
# info lld writes ("ensure_valid failed"), and a program never loads it:
# symbols stay, so do the instruction counts.
measured_library() {
    local bin=$1 dir=$2
    [ -f "$bin/librestoration.so" ] || { echo "no $bin/librestoration.so: swift build -c release --product restoration" >&2; exit 3; }
    mkdir -p "$dir"
    strip --strip-debug -o "$dir/librestoration.so" "$bin/librestoration.so"
    ln -sf librestoration.so "$dir/librestoration.so.1"
}
