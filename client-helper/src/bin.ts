#!/usr/bin/env node
console.log("waymark helper (scaffold)");
