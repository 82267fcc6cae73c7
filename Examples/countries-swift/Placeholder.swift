// TEMPORARY placeholder until this target's owner writes it.
@main struct Placeholder { static func main() {} }
