enum PlaceholderSectionServer {}
