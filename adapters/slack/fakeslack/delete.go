package fakeslack

// Delete removes a message, as a person deleting it in Slack would: later
// chat.update and reactions.add on it answer message_not_found. It reports
// whether the message existed.
func (s *Server) Delete(channel, ts string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			s.messages = append(s.messages[:i], s.messages[i+1:]...)
			return true
		}
	}
	return false
}

// Archive makes a channel unknown to later calls, as when it is archived or
// the bot is removed from it (Slack then answers channel_not_found or
// is_archived).
func (s *Server) Archive(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.channels, channel)
}
