// How many name keys the owner has, and the version of its keys (raised by every
// write that adds, changes or removes one): says whether a copy held in memory is current.
OPTIONAL MATCH (o:Owner {user: $user})
RETURN o.key_count AS names, o.keys_version AS version
