// urdfdom drops a link's whole <inertial> when one of its numbers does not parse (`nan`, `0,08`,
// `1e999`), with only a message on stderr, and the link then loads as massless. This scans the raw
// XML of every link's <inertial> (with TinyXML, which urdfdom itself parses with) and refuses the
// URDF with the file, line, link, element, attribute and offending value.
#pragma once

#include <string>

namespace heft::dynamics::detail {

// Throws ModelError("<source>:<line>: link '<name>' <inertial><mass value='nan'>: ...") for the
// first number urdfdom would not parse or that is not finite, or a missing <mass> / <inertia>
// attribute. XML that does not parse is left to urdfdom to report.
void CheckInertialNumbers(const std::string& xml, const std::string& source);

}  // namespace heft::dynamics::detail
