// Parses Adaptive Cards with the official adaptivecards package (the
// renderer's own parser) under Teams' host config, and prints, as JSON,
// every parse error or warning and every validation failure per card.
//
// usage: node check.js <dir holding node_modules/adaptivecards> <host config> <card.json>...
"use strict";
const fs = require("fs");
const path = require("path");

const [npmDir, hostConfigFile, ...cards] = process.argv.slice(2);
const AC = require(path.join(npmDir, "node_modules", "adaptivecards", "dist", "adaptivecards.js"));
const hostConfig = new AC.HostConfig(JSON.parse(fs.readFileSync(hostConfigFile, "utf8")));
const eventName = (n) => AC.ValidationEvent[n] || String(n);

const report = {};
for (const file of cards) {
  const problems = [];
  const card = new AC.AdaptiveCard();
  card.hostConfig = hostConfig;
  const context = new AC.SerializationContext(AC.Versions.v1_5);
  try {
    card.parse(JSON.parse(fs.readFileSync(file, "utf8")), context);
    for (let i = 0; i < context.eventCount; i++) {
      const e = context.getEventAt(i);
      problems.push(`parse: ${eventName(e.event)}: ${e.message}`);
    }
    for (const e of card.validateProperties().validationEvents) {
      problems.push(`validation: ${eventName(e.event)}: ${e.message}`);
    }
  } catch (err) {
    problems.push(`exception: ${err && err.message}`);
  }
  report[path.basename(file)] = problems;
}
process.stdout.write(JSON.stringify(report));
