"""cursor.com: login token, usage-export sync and plan quota."""
