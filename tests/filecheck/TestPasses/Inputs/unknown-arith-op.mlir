"arith.nonsense"() : () -> ()
