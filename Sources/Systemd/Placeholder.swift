enum PlaceholderSystemd {}
