// TEMPORARY placeholder until this target's owner writes it.
