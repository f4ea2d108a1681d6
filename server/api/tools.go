package api

import "encoding/json"

// Tool is a tool definition an agent runtime injects into its model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// AskUserTool is the ask_user tool: the Claude Code AskUserQuestion shape,
// with open-ended questions (no options) allowed too.
var askUserTool = Tool{
	Name: "ask_user",
	Description: "Ask the people you work for 1-4 questions and wait for their answer. Use it when you " +
		"need a decision, a preference or information only they have, or approval before an action " +
		"that is hard to undo; do not use it for things you can find out yourself. Each question has a " +
		"short header and 2-4 options (label + description), or no options for a free-text answer. " +
		"An \"Other\" choice with free text is always added for people automatically: do not add one. " +
		"Your run pauses until someone answers or the question expires.",
	InputSchema: json.RawMessage(`{
  "type": "object",
  "required": ["questions"],
  "additionalProperties": false,
  "properties": {
    "questions": {
      "type": "array", "minItems": 1, "maxItems": 4,
      "description": "The questions, asked and answered together.",
      "items": {
        "type": "object",
        "required": ["question", "header"],
        "additionalProperties": false,
        "properties": {
          "question": {"type": "string", "description": "The complete question, ending with a question mark."},
          "header": {"type": "string", "maxLength": 12, "description": "A very short label shown as a chip, e.g. \"Auth method\"."},
          "multiSelect": {"type": "boolean", "default": false, "description": "Allow choosing several options."},
          "options": {
            "type": "array", "minItems": 2, "maxItems": 4,
            "description": "2-4 distinct choices; omit for an open-ended question. \"Other\" is added automatically.",
            "items": {
              "type": "object",
              "required": ["label", "description"],
              "additionalProperties": false,
              "properties": {
                "label": {"type": "string", "description": "1-5 words."},
                "description": {"type": "string", "description": "What this choice means or implies."}
              }
            }
          }
        }
      }
    }
  }
}`),
}
