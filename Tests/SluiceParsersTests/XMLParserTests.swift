import SluiceParsers
import Testing

@Suite struct XMLParserTests {
    @Test func deliversElementsAttributesAndText() throws {
        let events = try feedXML(#"<a x="1"><b y="&lt;&amp;&#38;&quot;">t&amp;u</b><![CDATA[<c>]]></a>"#)
        #expect(events == ["<a x=1>", "<b y=<&&\">", "text:t&u", "</>", "text:<c>", "</>"])
    }

    @Test func oneByteChunksGiveTheSameEvents() throws {
        let text = #"<?xml version="1.0"?><root><row Id="1" Body="x &amp; y"/><row Id="2">é</row></root>"#
        #expect(try feedXML(text, chunk: 1) == feedXML(text))
    }

    @Test func malformedDocumentReportsLineAndColumn() throws {
        do {
            _ = try feedXML("<a>\n  <b></c>\n</a>")
            Issue.record("accepted a malformed document")
        } catch let error as ParseError {
            #expect(error.location.line == 2)
            #expect(error.location.column != nil)
            #expect(error.location.file == "test.xml")
            #expect("\(error)".hasPrefix("test.xml:2:"))
        }
    }

    @Test func truncatedDocumentIsAnError() {
        #expect(throws: ParseError.self) { try feedXML("<a><b>text</b>") }
        #expect(throws: ParseError.self) { try feedXML("") }
    }

    @Test func entityDeclarationsAreRefused() throws {
        let bomb = #"<!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><x>&b;</x>"#
        do {
            _ = try feedXML(bomb)
            Issue.record("accepted an entity declaration")
        } catch {
            #expect("\(error)".contains("entity"))
        }
    }

    @Test func externalEntitiesAreNeverLoaded() throws {
        let external = #"<!DOCTYPE x SYSTEM "file:///etc/passwd"><x>hi</x>"#
        let events = (try? feedXML(external)) ?? []
        #expect(!events.joined().contains("root:"))
    }

    @Test func handlerErrorsStopTheParse() throws {
        let log = EventLog()
        log.stopAt = "<b>"
        do {
            _ = try feedXML("<a><b/><c/></a>", log: log)
            Issue.record("the handler's error was lost")
        } catch let error as ParseError {
            guard case .rejected(let inner) = error.reason else {
                Issue.record("wrong reason")
                return
            }
            #expect(inner is StopError)
            #expect(!log.events.contains("<c>"))
        }
    }
}
