// A client file's node in the clocks, derived from the file's id, so that a file stamps its
// changes from its very first write, before it has ever reached a server.

extension SyncUUID {
    /// The node id of the client file this UUID names: the UUID's first eight bytes read
    /// big-endian, with the top bit cleared (ids stay within PostgreSQL's bigint) and 0 (the
    /// server's node) made 1. Two files meet on one node with odds of one in 2^63 per pair; a
    /// server refuses the second to bind, and that file takes a new id.
    public var nodeId: UInt64 {
        let id = high & 0x7FFF_FFFF_FFFF_FFFF
        return id == 0 ? 1 : id
    }
}
