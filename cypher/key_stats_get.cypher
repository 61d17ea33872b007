// The running sum and count of the owner's key vectors (their mean centres scores).
OPTIONAL MATCH (o:Owner {user: $user})
RETURN o.key_sum AS sum, o.key_count AS count
