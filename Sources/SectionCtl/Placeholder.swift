enum PlaceholderSectionCtl {}
